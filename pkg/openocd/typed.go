package openocd

import (
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
)

// Effect is what a typed command does to the target.
type Effect int

// Effects of typed commands.
const (
	// EffectInfo only reports on the debugger (targets, version, poll).
	EffectInfo Effect = iota
	// EffectRead reads target memory or registers.
	EffectRead
	// EffectControl halts, resumes or resets the target.
	EffectControl
	// EffectWrite writes target memory or a register.
	EffectWrite
)

// Typed is a debugger command hilrun understands word by word: the forms an
// openocd: step may take on a server that runs no raw Tcl. ParseTyped reads
// one from text and String writes it again from the numbers it parsed, so
// nothing the text said reaches OpenOCD's Tcl interpreter as text.
type Typed struct {
	// Name is the command: halt, resume, reset, wait_halt, mdb/mdh/mdw/mdd,
	// mwb/mwh/mww/mwd, read_memory, reg, targets, version or poll.
	Name string
	// Phys is true for md*/mw*/read_memory on physical addresses.
	Phys bool
	// Addr is the address of memory commands, the resume address.
	Addr uint64
	// Width of memory accesses in bits.
	Width int
	// Count of values read, or of copies of Value written.
	Count int
	// Value written by mw* and reg NAME VALUE.
	Value uint64
	// Mode of reset: run, halt or init.
	Mode string
	// Reg names the register of reg.
	Reg string
	// Ms is halt's and wait_halt's time in milliseconds.
	Ms uint64
	// has says which optional words were given.
	hasAddr, hasCount, hasValue, hasMs bool
}

// maxTypedCount bounds what one typed memory command reads or writes.
const maxTypedCount = 1 << 16

// typedWord is the only shape a word of a typed command may have: no
// quotes, braces, brackets, $ or backslashes that Tcl would act on.
var typedWord = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

var mdWidths = map[byte]int{'b': 8, 'h': 16, 'w': 32, 'd': 64}

// ParseTyped reads cmd as a typed command, and says why it is not one
// otherwise.
func ParseTyped(cmd string) (Typed, error) {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return Typed{}, fmt.Errorf("empty command")
	}
	for _, w := range f {
		if !typedWord.MatchString(w) {
			return Typed{}, fmt.Errorf("%q is not a plain word or number", w)
		}
	}
	t := Typed{Name: f[0]}
	parse, ok := typedCommands[t.Name]
	if !ok {
		return t, fmt.Errorf("%s is not one of the commands hilrun runs without raw Tcl (halt, resume, reset, wait_halt, md*, mw*, read_memory, reg, targets, version, poll)", t.Name)
	}
	err := parse(&t, typedArgs{name: t.Name, args: f[1:]})
	return t, err
}

// typedCommands reads the arguments of each typed command into t, by the
// command's name.
var typedCommands = map[string]func(t *Typed, a typedArgs) error{
	"targets":     parseNoArgs,
	"version":     parseNoArgs,
	"poll":        parseNoArgs,
	"halt":        parseHalt,
	"wait_halt":   parseHalt,
	"resume":      parseResume,
	"reset":       parseReset,
	"reg":         parseReg,
	"read_memory": parseReadMemory,
	"mdb":         parseMemory,
	"mdh":         parseMemory,
	"mdw":         parseMemory,
	"mdd":         parseMemory,
	"mwb":         parseMemory,
	"mwh":         parseMemory,
	"mww":         parseMemory,
	"mwd":         parseMemory,
}

// typedArgs are the words after a typed command's name.
type typedArgs struct {
	name string
	args []string
}

// num reads argument i, what it is naming it in the error.
func (a typedArgs) num(i int, what string) (uint64, error) {
	v, err := strconv.ParseUint(a.args[i], 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a number", what, a.args[i])
	}
	return v, nil
}

// nargs says why the command's arguments are not min to max of them, or
// returns nil.
func (a typedArgs) nargs(min, max int) error {
	if len(a.args) < min || len(a.args) > max {
		if min == max {
			return fmt.Errorf("%s takes %d arguments, found %d", a.name, min, len(a.args))
		}
		return fmt.Errorf("%s takes %d to %d arguments, found %d", a.name, min, max, len(a.args))
	}
	return nil
}

// parseNoArgs reads targets, version and poll.
func parseNoArgs(t *Typed, a typedArgs) error { return a.nargs(0, 0) }

// parseHalt reads halt and wait_halt: [MS].
func parseHalt(t *Typed, a typedArgs) error {
	if err := a.nargs(0, 1); err != nil {
		return err
	}
	var err error
	if len(a.args) == 1 {
		t.hasMs = true
		t.Ms, err = a.num(0, "time")
	}
	return err
}

// parseResume reads resume: [ADDRESS].
func parseResume(t *Typed, a typedArgs) error {
	if err := a.nargs(0, 1); err != nil {
		return err
	}
	var err error
	if len(a.args) == 1 {
		t.hasAddr = true
		t.Addr, err = a.num(0, "address")
	}
	return err
}

// parseReset reads reset: [run|halt|init], run by default.
func parseReset(t *Typed, a typedArgs) error {
	if err := a.nargs(0, 1); err != nil {
		return err
	}
	t.Mode = "run"
	if len(a.args) == 1 {
		t.Mode = a.args[0]
	}
	if t.Mode != "run" && t.Mode != "halt" && t.Mode != "init" {
		return fmt.Errorf("reset mode %q: want run, halt or init", t.Mode)
	}
	return nil
}

// parseReg reads reg: [NAME [VALUE]].
func parseReg(t *Typed, a typedArgs) error {
	if err := a.nargs(0, 2); err != nil {
		return err
	}
	var err error
	if len(a.args) >= 1 {
		t.Reg = a.args[0]
	}
	if len(a.args) == 2 {
		t.hasValue = true
		t.Value, err = a.num(1, "value")
	}
	return err
}

// parseReadMemory reads read_memory: ADDRESS WIDTH COUNT [phys].
func parseReadMemory(t *Typed, a typedArgs) error {
	if len(a.args) == 4 && a.args[3] == "phys" {
		t.Phys = true
		a.args = a.args[:3]
	}
	if err := a.nargs(3, 3); err != nil {
		return err
	}
	var err error
	if t.Addr, err = a.num(0, "address"); err != nil {
		return err
	}
	w, err := a.num(1, "width")
	if err != nil {
		return err
	}
	if w != 8 && w != 16 && w != 32 && w != 64 {
		return fmt.Errorf("width %d: want 8, 16, 32 or 64", w)
	}
	t.Width = int(w)
	c, err := a.num(2, "count")
	if err != nil {
		return err
	}
	t.Count, t.hasCount = int(min(c, maxTypedCount+1)), true
	return t.checkRange()
}

// parseMemory reads md* ([phys] ADDRESS [COUNT]) and mw* ([phys] ADDRESS
// VALUE [COUNT]), the width from the name's last letter.
func parseMemory(t *Typed, a typedArgs) error {
	t.Width = mdWidths[t.Name[2]]
	if len(a.args) > 0 && a.args[0] == "phys" {
		t.Phys = true
		a.args = a.args[1:]
	}
	write := t.Name[:2] == "mw"
	need := 1
	if write {
		need = 2
	}
	if err := a.nargs(need, need+1); err != nil {
		return err
	}
	var err error
	if t.Addr, err = a.num(0, "address"); err != nil {
		return err
	}
	if write {
		if t.Value, err = a.num(1, "value"); err != nil {
			return err
		}
		t.hasValue = true
		if t.Width < 64 && t.Value>>t.Width != 0 {
			return fmt.Errorf("value 0x%x does not fit in %d bits", t.Value, t.Width)
		}
	}
	t.Count = 1
	if len(a.args) == need+1 {
		c, err := a.num(need, "count")
		if err != nil {
			return err
		}
		t.Count, t.hasCount = int(min(c, maxTypedCount+1)), true
	}
	return t.checkRange()
}

func (t Typed) checkRange() error {
	if t.Count < 1 || t.Count > maxTypedCount {
		return fmt.Errorf("count must be 1 to %d", maxTypedCount)
	}
	hi, lo := bits.Mul64(uint64(t.Count), uint64(t.Width/8))
	if end, carry := bits.Add64(t.Addr, lo, 0); hi != 0 || carry != 0 && end != 0 {
		return fmt.Errorf("0x%x plus %d values of %d bits passes the end of the address space", t.Addr, t.Count, t.Width)
	}
	return nil
}

// Effect says what t does to the target.
func (t Typed) Effect() Effect {
	switch {
	case t.Name == "resume" && t.hasAddr:
		// Resuming at an address sets the program counter: a register
		// write, which can run code from anywhere.
		return EffectWrite
	case t.Name == "halt" || t.Name == "resume" || t.Name == "reset" || t.Name == "wait_halt":
		return EffectControl
	case strings.HasPrefix(t.Name, "mw") || t.Name == "reg" && t.hasValue:
		return EffectWrite
	case strings.HasPrefix(t.Name, "md") || t.Name == "read_memory" || t.Name == "reg":
		return EffectRead
	}
	return EffectInfo
}

// Writes returns the memory an mw* command writes: its address and size in
// bytes. ok is false for other commands.
func (t Typed) Writes() (addr, size uint64, ok bool) {
	if !strings.HasPrefix(t.Name, "mw") {
		return 0, 0, false
	}
	return t.Addr, uint64(t.Count) * uint64(t.Width/8), true
}

// String is the command written again from what ParseTyped read.
func (t Typed) String() string {
	var b strings.Builder
	b.WriteString(t.Name)
	word := func(s string) { b.WriteByte(' '); b.WriteString(s) }
	hex := func(v uint64) { word("0x" + strconv.FormatUint(v, 16)) }
	switch {
	case t.Name == "halt" || t.Name == "wait_halt":
		if t.hasMs {
			word(strconv.FormatUint(t.Ms, 10))
		}
	case t.Name == "resume":
		if t.hasAddr {
			hex(t.Addr)
		}
	case t.Name == "reset":
		word(t.Mode)
	case t.Name == "reg":
		if t.Reg != "" {
			word(t.Reg)
		}
		if t.hasValue {
			hex(t.Value)
		}
	case t.Name == "read_memory":
		hex(t.Addr)
		word(strconv.Itoa(t.Width))
		word(strconv.Itoa(t.Count))
		if t.Phys {
			word("phys")
		}
	case strings.HasPrefix(t.Name, "md") || strings.HasPrefix(t.Name, "mw"):
		if t.Phys {
			word("phys")
		}
		hex(t.Addr)
		if t.hasValue {
			hex(t.Value)
		}
		if t.hasCount {
			word(strconv.Itoa(t.Count))
		}
	}
	return b.String()
}

package steps

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// This file holds the memory kinds, mem_read, mem_write and mem_poll: one
// description of target memory (MemSpec) that the three decode, check
// and name alike. The checks against a step's width are in limits.go.

// Memory step kinds.
const (
	KindMemRead  Kind = "mem_read"
	KindMemWrite Kind = "mem_write"
	KindMemPoll  Kind = "mem_poll"
)

func init() {
	for _, k := range []KindSpec{
		{Kind: KindMemRead, Caps: CapMemRead | CapReadFiles, caps: memCaps(CapMemRead), Doc: "read target memory",
			Allowed: []string{"address", "symbol", "offset", "elf", "elf_path", "width", "count", "probe", "save", "expect", "label", "timeout"}},
		{Kind: KindMemWrite, Caps: CapMemWrite | CapReadFiles, caps: memCaps(CapMemWrite), Doc: "write target memory",
			Allowed: []string{"address", "symbol", "offset", "elf", "elf_path", "width", "value", "verify", "probe", "label", "timeout"}},
		{Kind: KindMemPoll, Caps: CapMemRead | CapReadFiles, caps: memCaps(CapMemRead), Doc: "read target memory until a condition holds",
			Allowed: []string{"address", "symbol", "offset", "elf", "elf_path", "width", "until", "expect", "interval", "probe", "save", "label", "timeout"}},
	} {
		k.On, k.Keys, k.Note = OnProbe, []string{string(k.Kind)}, "read-files only with elf:"
		k.decode, k.finish, k.check, k.title = decodeMem, finishMem, validateMem, titleMem
		registerKind(k)
	}
}

// MemSpec addresses target memory: by Address (a number or an expression)
// or by Symbol (+ Offset) in an ELF file.
type MemSpec struct {
	hasAddr bool // an address was written, as a number or expression
	Address *Expr
	Addr    uint64 // when Address is nil and Symbol is ""
	Symbol  string
	Offset  int64
	ELF     string
	// Width in bits: 8, 16, 32 or 64; 0 means from the symbol's size, else
	// 32.
	Width int
	// Count of values to read (mem_read); 0 means 1, or from the symbol's
	// size.
	Count int
	// Values to write (mem_write); each a number or a template.
	Values []ValueSpec
	Verify bool
	// Check is what a read must show (mem_read expect, mem_poll expect).
	Check *MemCheck
	// Until is mem_poll's condition over `value`.
	Until    *Expr
	Interval time.Duration
	Label    string
	// SaveVar names the variable a read is saved to.
	SaveVar string
}

// ValueSpec is a number to write: fixed, or text with ${var} references
// read as a number when the step runs.
type ValueSpec struct {
	Value uint64
	Text  *Template
	Pos   Pos
}

// MemCheck is an expected read: Values compared one to one (a single value
// applies to every word read), each after Mask when Mask is set. A value
// may be text with ${var}, as a mem_write's value may.
type MemCheck struct {
	Values []ValueSpec
	Mask   *uint64
}

// memCaps adds reading a file for a memory step that looks its symbol up
// in an ELF file the step names.
func memCaps(base Cap) func(*Step) Cap {
	return func(s *Step) Cap {
		if s.Mem != nil && s.Mem.ELF != "" {
			return base | CapReadFiles
		}
		return base
	}
}

// memFields decode the keys of memory steps into their MemSpec, one
// function per key; the keys every kind shares (probe, timeout) are not
// here.
var memFields = map[string]func(d *decoder, m *MemSpec, key string, v *yaml.Node){
	"mem_read":  memKindKey,
	"mem_write": memKindKey,
	"mem_poll":  memKindKey,
	"address":   func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { d.address(m, v) },
	"symbol":    func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Symbol, _ = d.str(v, "symbol") },
	"offset":    memOffset,
	"elf":       memELF,
	"elf_path":  memELF,
	"width":     memWidthKey,
	"count":     func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Count, _ = d.integer(v, "count", 1, 1<<20) },
	"value":     func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Values = d.values(v, "value") },
	"verify":    func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Verify, _ = d.boolean(v, "verify") },
	"expect":    func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Check = d.memCheck(v) },
	"until": func(d *decoder, m *MemSpec, _ string, v *yaml.Node) {
		if src, ok := d.text(v, "until"); ok {
			m.Until = &Expr{Src: src, Pos: d.pos(v)}
		}
	},
	"interval": func(d *decoder, m *MemSpec, _ string, v *yaml.Node) {
		m.Interval, _ = d.durationIn(v, "interval", timeoutRange)
	},
	"label": func(d *decoder, m *MemSpec, _ string, v *yaml.Node) { m.Label, _ = d.text(v, "label") },
	"save":  memSave,
}

// decodeMem reads a key of a memory step that memFields knows.
func decodeMem(d *decoder, s *Step, key string, v *yaml.Node) bool {
	if s.Mem == nil {
		s.Mem = &MemSpec{}
	}
	fn, ok := memFields[key]
	if ok {
		fn(d, s.Mem, key, v)
	}
	return ok
}

// memKindKey reads the kind key of a memory step: true (the address is
// a key of its own), or the address itself.
func memKindKey(d *decoder, m *MemSpec, key string, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		if b, _ := d.boolean(v, key); !b {
			d.add(d.pos(v), "%s must be true or an address", key)
		}
		return
	}
	d.address(m, v)
}

// memOffset reads offset: a signed whole number, or one written as hex.
func memOffset(d *decoder, m *MemSpec, _ string, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
		var o int64
		if v.Decode(&o) == nil {
			m.Offset = o
			return
		}
	}
	n, ok := d.number64(v, "offset")
	if ok {
		m.Offset = int64(n)
	}
}

// memELF reads elf: (or elf_path:), the file a symbol is looked up in.
func memELF(d *decoder, m *MemSpec, key string, v *yaml.Node) {
	if path, ok := d.str(v, key); ok {
		m.ELF = d.relPath(path)
	}
}

// memWidthKey reads width: 8, 16, 32 or 64 bits.
func memWidthKey(d *decoder, m *MemSpec, _ string, v *yaml.Node) {
	w, ok := d.integer(v, "width", 8, 64)
	if ok && w != 8 && w != 16 && w != 32 && w != 64 {
		d.add(d.pos(v), "width must be 8, 16, 32 or 64 bits, found %d", w)
	}
	m.Width = w
}

// memSave reads save: the one variable a read is saved to.
func memSave(d *decoder, m *MemSpec, _ string, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		d.add(d.pos(v), "save must be a variable name, found %s", kindName(v))
		return
	}
	name := v.Value
	if !validName(name) {
		d.add(d.pos(v), "save: %q is not a variable name", name)
	} else {
		m.SaveVar = name
	}
}

// finishMem checks what a memory step needs of its keys together: one
// address or symbol, a value to write, a condition to poll for.
func finishMem(d *decoder, s *Step, keys stepKeys) {
	d.checkMem(s, keys.pairs)
	m := s.Mem
	hasAddr := m.hasAddr || keys.has["address"] || !isTrueKind(keys.pairs, string(s.Kind))
	switch {
	case hasAddr && m.Symbol != "":
		d.add(s.Pos, "give %s an address or a symbol, not both", s.Kind)
	case !hasAddr && m.Symbol == "":
		d.add(s.Pos, "%s needs an address (address: 0x20000000) or a symbol (symbol: counter)", s.Kind)
	}
	if s.Kind == KindMemWrite && len(m.Values) == 0 && !keys.has["value"] {
		d.add(s.Pos, "mem_write needs a value (or a list of values)")
	}
	if s.Kind == KindMemPoll {
		switch {
		case m.Until == nil && m.Check == nil && !keys.has["until"] && !keys.has["expect"]:
			d.add(s.Pos, "mem_poll needs until: (an expression over value) or expect:")
		case keys.has["until"] && keys.has["expect"]:
			d.add(s.Pos, "give mem_poll until: or expect:, not both")
		case m.Check != nil && len(m.Check.Values) > 1:
			d.add(s.Pos, "mem_poll reads one value: expect one value or {mask, value}, not a list")
		}
	}
}

// isTrueKind reports whether the step's kind key is given as `true` (the
// seed form, address as a sibling key) rather than as the address.
func isTrueKind(ps []pair, key string) bool {
	for _, p := range ps {
		if p.key.Value == key {
			return p.val.Kind == yaml.ScalarNode && p.val.Tag == "!!bool"
		}
	}
	return false
}

// validateMem is validate's look at a memory step: the expressions and
// templates it reads, and the variable it saves.
func validateMem(v *validator, s *Step) {
	m := s.Mem
	if m.Address != nil {
		v.compile(m.Address)
	}
	for _, val := range m.Values {
		v.template(val.Pos, val.Text)
	}
	if m.Check != nil {
		for _, val := range m.Check.Values {
			v.template(val.Pos, val.Text)
		}
	}
	if m.Until != nil {
		// value is the word just read, inside until only.
		had := v.defined["value"]
		v.defined["value"] = true
		v.compile(m.Until)
		v.defined["value"] = had
	}
	if m.SaveVar != "" {
		v.define(m.SaveVar)
	}
}

// titleMem names the memory the step touches.
func titleMem(s *Step) string { return clip(s.Mem.describe()) }

// describe names the memory a step touches: "blink", "counter+4",
// "0x48000014", or the address expression.
func (m *MemSpec) describe() string {
	if m == nil {
		return ""
	}
	if m.Label != "" {
		return m.Label
	}
	switch {
	case m.Symbol != "" && m.Offset != 0:
		return fmt.Sprintf("%s%+d", m.Symbol, m.Offset)
	case m.Symbol != "":
		return m.Symbol
	case m.Address != nil:
		return m.Address.Src
	}
	return fmt.Sprintf("0x%08x", m.Addr)
}

// address reads a number ("0x48000014", 536870912) or an expression over
// variables ("base + 0x14").
func (d *decoder) address(m *MemSpec, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Tag == "!!bool" {
		d.add(d.pos(v), "address must be a number like 0x20000000 or an expression, found %s", kindName(v))
		return
	}
	if m.Address != nil || m.hasAddr {
		d.add(d.pos(v), "the address is given twice: write it as the step's value or as address:, not both")
		return
	}
	m.hasAddr = true
	if n, err := parseUint(v.Value); err == nil {
		m.Addr = n
		return
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(v.Value), 0, 64); err == nil {
		d.add(d.pos(v), "address %s is negative", v.Value)
		return
	}
	m.Address = &Expr{Src: v.Value, Pos: d.pos(v)}
}

// values reads one value or a list: numbers, or text with ${var}. what
// names the key in messages.
func (d *decoder) values(v *yaml.Node, what string) []ValueSpec {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = nil
		for _, c := range v.Content {
			items = append(items, resolve(c))
		}
		if len(items) == 0 {
			d.add(d.pos(v), "%s must not be an empty list", what)
		}
	}
	var out []ValueSpec
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag == "!!null" || it.Tag == "!!bool" {
			d.add(d.pos(it), "%s must be a number like 0x40 or 64, or text with ${var}, found %s", what, kindName(it))
			continue
		}
		if n, err := parseUint(it.Value); err == nil {
			out = append(out, ValueSpec{Value: n, Pos: d.pos(it)})
			continue
		}
		t, ok := d.template(it, what)
		if !ok {
			continue
		}
		if t.IsStatic() {
			d.add(d.pos(it), "%s %q is not a number: expected something like 0x40, 64 or ${var}", what, it.Value)
			continue
		}
		out = append(out, ValueSpec{Text: t, Pos: d.pos(it)})
	}
	return out
}

// memCheck reads a mem_read or mem_poll expect: a value, a list, or
// {mask, value}.
func (d *decoder) memCheck(v *yaml.Node) *MemCheck {
	c := &MemCheck{}
	switch v.Kind {
	case yaml.MappingNode:
		for _, p := range d.pairs(v) {
			switch p.key.Value {
			case "mask":
				if n, ok := d.number64(p.val, "mask"); ok {
					c.Mask = &n
				}
			case "value":
				if p.val.Kind == yaml.SequenceNode {
					d.add(d.pos(p.val), "expect {mask, value} takes one value, found a list")
					continue
				}
				c.Values = d.values(p.val, "value")
			default:
				d.unknownKey(p.key, "expect", []string{"mask", "value"})
			}
		}
		if c.Values == nil {
			d.add(d.pos(v), "expect {mask, value} needs a value")
		}
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.add(d.pos(v), "expect must not be an empty list")
			break
		}
		c.Values = d.values(v, "expect")
	default:
		c.Values = d.values(v, "expect")
	}
	return c
}

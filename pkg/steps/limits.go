package steps

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// Limits on what a sequence file may ask for. Each is checked when the file
// is loaded, so `hilrun validate` refuses what would exhaust memory or
// misbehave at run time, with the FILE:LINE:COL of the value at fault.
const (
	// MaxFileBytes is the largest sequence or bench file the loader reads.
	// Decoding costs about 100 times the file's size in memory.
	MaxFileBytes = 4 << 20
	// MaxAliasNodes bounds what YAML aliases (*name) add to a document:
	// the nodes an alias stands for count again each time it is used.
	// Without a bound a few kilobytes of nested aliases expand to
	// billions of nodes.
	MaxAliasNodes = 100_000
	// MaxAliasBytes bounds the text that aliases add to a document: the
	// text an alias stands for counts again each time it is used. A few
	// uses of a large anchor would otherwise make gigabytes of copies,
	// in the values decoded and in what is written out again.
	MaxAliasBytes = MaxFileBytes
	// MinTimeout is the shortest timeout a step may give (0 means the
	// default): anything shorter cannot be told apart from no wait at all.
	MinTimeout = time.Millisecond
	// MaxTimeout is the longest timeout, delay, capture window, poll
	// interval or repeat period a step may give.
	MaxTimeout = 24 * time.Hour
	// MaxRunTime is the longest a sequence's timeout or a repeat's for:
	// may be, so soaks of several days can be written.
	MaxRunTime = 30 * 24 * time.Hour
	// MaxExecutions bounds the steps one run may execute, counting each
	// iteration of a repeat: nested repeats multiply. See Executions.
	MaxExecutions = 100_000_000
)

// ReadFile reads a sequence or bench file of at most MaxFileBytes,
// opened through fs.
func ReadFile(fs files.Policy, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if err := checkSize(path, len(data)); err != nil {
		return nil, err
	}
	return data, nil
}

func checkSize(file string, n int) error {
	if n <= MaxFileBytes {
		return nil
	}
	return ErrorList{{Pos: Pos{File: file, Line: 1, Col: 1},
		Msg: fmt.Sprintf("the file is larger than the file size limit of %d MiB: split it, or use repeat: for steps that repeat", MaxFileBytes>>20)}}
}

// aliasSize is what a node stands for, aliases expanded: its nodes and
// the bytes of its scalars. Both saturate past their limits.
type aliasSize struct{ nodes, bytes uint64 }

func (a aliasSize) add(b aliasSize) aliasSize {
	return aliasSize{min(a.nodes+b.nodes, MaxAliasNodes+1), min(a.bytes+b.bytes, MaxAliasBytes+1)}
}

// CheckAliases refuses a document whose aliases add more than
// MaxAliasNodes nodes or MaxAliasBytes bytes of text to it, at the alias
// that passes the limit, before anything decodes the expanded tree. file
// names the document in the error.
func CheckAliases(file string, root *yaml.Node) error {
	size := map[*yaml.Node]aliasSize{}
	busy := map[*yaml.Node]bool{}
	var expanded func(n *yaml.Node) (aliasSize, bool)
	expanded = func(n *yaml.Node) (aliasSize, bool) {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return aliasSize{1, 0}, true
			}
			n = n.Alias
		}
		if v, ok := size[n]; ok {
			return v, true
		}
		if busy[n] {
			return aliasSize{}, false
		}
		busy[n] = true
		total := aliasSize{1, 0}.add(aliasSize{0, uint64(len(n.Value))})
		for _, c := range n.Content {
			v, ok := expanded(c)
			if !ok {
				return aliasSize{}, false
			}
			total = total.add(v)
		}
		busy[n] = false
		size[n] = total
		return total, true
	}
	var added aliasSize
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.AliasNode {
			v, ok := expanded(n)
			if !ok {
				return ErrorList{{Pos: Pos{File: file, Line: n.Line, Col: n.Column}, Msg: fmt.Sprintf("the alias *%s contains itself", n.Value)}}
			}
			added = added.add(v)
			switch {
			case added.nodes > MaxAliasNodes:
				return ErrorList{{Pos: Pos{File: file, Line: n.Line, Col: n.Column},
					Msg: fmt.Sprintf("aliases expand the document by more than %d nodes (the alias expansion limit): write the steps out, or use repeat:", MaxAliasNodes)}}
			case added.bytes > MaxAliasBytes:
				return ErrorList{{Pos: Pos{File: file, Line: n.Line, Col: n.Column},
					Msg: fmt.Sprintf("aliases expand the document by more than %d MiB of text (the alias expansion limit): write the values out, or use repeat:", MaxAliasBytes>>20)}}
			}
			return nil
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// UnmarshalYAML decodes YAML text into v as yaml.Unmarshal does, within
// the limits of a sequence file: at most MaxFileBytes, and aliases within
// the alias expansion limit. what names the text in errors.
func UnmarshalYAML(what string, data []byte, v any) error {
	if err := checkSize(what, len(data)); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	if err := CheckAliases(what, doc.Content[0]); err != nil {
		return err
	}
	return doc.Decode(v)
}

// durationRange is what a duration field accepts: zero (when ZeroOK, it
// means the default) or Min to Max.
type durationRange struct {
	Min, Max time.Duration
	ZeroOK   bool
}

var (
	// timeoutRange is for timeouts, capture windows and poll intervals:
	// 0 is the default.
	timeoutRange = durationRange{Min: MinTimeout, Max: MaxTimeout, ZeroOK: true}
	// delayRange is for waits, where 0 is no wait.
	delayRange = durationRange{Max: MaxTimeout, ZeroOK: true}
	// runRange is for a sequence's timeout and a repeat's for:.
	runRange = durationRange{Min: MinTimeout, Max: MaxRunTime, ZeroOK: true}
)

// checkRange reports whether v is in r, and adds an error at n when not.
func (d *decoder) checkRange(n *yaml.Node, what string, v time.Duration, r durationRange) bool {
	switch {
	case v == 0 && r.ZeroOK:
	case v < r.Min:
		d.add(d.pos(n), "%s of %s is too short: the shortest is %s (0 means the default)", what, v, r.Min)
		return false
	case v > r.Max:
		d.add(d.pos(n), "%s of %s is too long: the longest is %s", what, v, fmtDuration(r.Max))
		return false
	}
	return true
}

// durationIn reads a duration written with a unit and checks it is in r.
func (d *decoder) durationIn(n *yaml.Node, what string, r durationRange) (time.Duration, bool) {
	v, ok := d.duration(n, what)
	if !ok || !d.checkRange(n, what, v, r) {
		return 0, false
	}
	return v, true
}

// numberIn reads a bare number of units (read_timeout in seconds,
// delay_ms in milliseconds), checks the duration it makes is in r, and
// converts it without overflow.
func (d *decoder) numberIn(n *yaml.Node, what string, unit time.Duration, r durationRange) (time.Duration, bool) {
	f, ok := d.number(n, what)
	if !ok {
		return 0, false
	}
	// Compare as floats first: converting 1e300 seconds to a Duration
	// overflows to a negative number.
	if f*float64(unit) > float64(r.Max) {
		d.add(d.pos(n), "%s of %s is too long: the longest is %s", what, n.Value, fmtDuration(r.Max))
		return 0, false
	}
	v := time.Duration(f * float64(unit))
	if f > 0 && v == 0 {
		v = 1 // below a nanosecond: too short, not zero
	}
	if !d.checkRange(n, what, v, r) {
		return 0, false
	}
	return v, true
}

// fmtDuration writes 24h as 24h rather than 24h0m0s.
func fmtDuration(v time.Duration) string {
	s := v.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

var durationSyntax = regexp.MustCompile(`^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// durationError explains why time.ParseDuration refused s.
func durationError(what, s string) string {
	if durationSyntax.MatchString(strings.TrimSpace(s)) {
		return fmt.Sprintf("%s: %q is not a duration: it is too long to count in nanoseconds (the longest is about 2562047h)", what, s)
	}
	return fmt.Sprintf("%s: %q is not a duration: expected a number and a unit (ns, us, ms, s, m, h), like 250ms or 2s", what, s)
}

// memWidth is the width in bits a memory step accesses, or 64 when it
// comes from a symbol's size and is not known yet.
func memWidth(m *MemSpec) int {
	switch {
	case m.Width != 0:
		return m.Width
	case m.Symbol != "":
		return 64
	}
	return 32
}

// checkMem checks the numbers of a memory step against its width: each
// value and expected value fits in it, and the access does not run past
// the end of the address space.
func (d *decoder) checkMem(s *Step, ps []pair) {
	m := s.Mem
	w := memWidth(m)
	if w != 8 && w != 16 && w != 32 && w != 64 {
		return // already reported
	}
	largest := uint64(math.MaxUint64) >> (64 - w)
	fits := func(n *yaml.Node, what string) {
		n = resolve(n)
		if n.Kind != yaml.ScalarNode {
			return
		}
		v, err := parseUint(n.Value)
		if err == nil && v > largest {
			d.add(d.pos(n), "%s %s does not fit in %d bits (the step's width): the largest is %#x", what, n.Value, w, largest)
		}
	}
	for _, p := range ps {
		var nodes []*yaml.Node
		switch {
		case p.key.Value == "value":
			nodes = listOf(p.val)
		case p.key.Value == "expect" && p.val.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(p.val.Content); i += 2 {
				if k := p.val.Content[i].Value; k == "value" || k == "mask" {
					fits(p.val.Content[i+1], k)
				}
			}
			continue
		case p.key.Value == "expect":
			nodes = listOf(p.val)
		default:
			continue
		}
		for _, n := range nodes {
			fits(n, p.key.Value)
		}
	}
	if m.Address != nil || m.Symbol != "" || !m.hasAddr {
		return
	}
	words := uint64(max(m.Count, 1))
	if s.Kind == KindMemWrite && len(m.Values) > 1 {
		words = uint64(len(m.Values))
	}
	span := words * uint64(w/8)
	// A 32-bit access below 4 GiB is on a 32-bit target (or a 32-bit
	// window of a larger one), whose address wraps at 4 GiB.
	limit, space := uint64(math.MaxUint64), "64-bit"
	if w <= 32 && m.Addr <= math.MaxUint32 {
		limit, space = math.MaxUint32, "32-bit"
	}
	end, carry := bits.Add64(m.Addr, span-1, 0)
	if carry != 0 || end > limit {
		at := s.Pos
		for _, p := range ps {
			if p.key.Value == "address" || p.key.Value == string(s.Kind) {
				at = d.pos(p.val)
			}
		}
		d.add(at, "%s at %#x of %d bytes (%d × %d bits) runs past the end of the %s address space (%#x)", s.Kind, m.Addr, span, words, w, space, limit)
	}
}

func listOf(n *yaml.Node) []*yaml.Node {
	if n.Kind == yaml.SequenceNode {
		return n.Content
	}
	return []*yaml.Node{n}
}

// Executions returns how many steps seq may execute at most, counting
// each iteration of a repeat's steps, finally included; groups and
// repeats themselves do not count, only the steps in them. It saturates
// at math.MaxUint64. bounded is false when a repeat runs for: a time
// without every:, whose iterations only time bounds; such a repeat counts
// one iteration in the total.
func Executions(seq *Sequence) (n uint64, bounded bool) {
	n1, b1 := retried(seq.Retry, seq.Steps)
	n2, b2 := executions(seq.Finally)
	return satAdd(n1, n2), b1 && b2
}

func executions(ss []*Step) (uint64, bool) {
	var total uint64
	bounded := true
	for _, s := range ss {
		switch s.Kind {
		case KindGroup:
			n, b := retried(s.Retry, s.Steps)
			total, bounded = satAdd(total, n), bounded && b
		case KindRepeat:
			body, b := executions(s.Steps)
			iters, ib := Iterations(s)
			total, bounded = satAdd(total, satMul(iters, body)), bounded && b && ib
		case KindParallel, KindBranch:
			body, b := executions(s.Steps)
			fin, fb := executions(s.Finally)
			total, bounded = satAdd(total, satAdd(body, fin)), bounded && b && fb
		default:
			total = satAdd(total, 1)
		}
	}
	return total, bounded
}

// Iterations returns how many times repeat step s runs its steps at most.
// bounded is false when only time bounds it (for: without every: nor
// count:); then it returns 1.
func Iterations(s *Step) (n uint64, bounded bool) {
	var byTime uint64
	if s.For > 0 && s.Every > 0 {
		byTime = uint64((s.For + s.Every - 1) / s.Every)
	}
	switch {
	case s.Count > 0 && byTime > 0:
		return min(uint64(s.Count), byTime), true
	case s.Count > 0:
		return uint64(s.Count), true
	case byTime > 0:
		return byTime, true
	}
	return 1, false
}

func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// checkExecutions refuses a sequence whose repeats multiply past
// MaxExecutions, at the innermost repeat or group that passes it.
func checkExecutions(ss []*Step, e *errs) {
	for _, s := range ss {
		if !IsContainer(s.Kind) {
			continue
		}
		n, _ := executions([]*Step{s})
		if n <= MaxExecutions {
			continue
		}
		before := len(e.list)
		checkExecutions(s.Steps, e)
		if len(e.list) > before || s.Kind == KindBranch {
			continue
		}
		if s.Kind == KindRepeat {
			iters, _ := Iterations(s)
			body, _ := executions(s.Steps)
			e.add(s.Pos, "this repeat would run %s steps (%d iterations of %s), more than the limit of %d steps per run (the execution limit): lower its count, or split the run", count(n), iters, count(body), MaxExecutions)
			continue
		}
		if s.Kind == KindParallel {
			e.add(s.Pos, "this parallel: would run %s steps, more than the limit of %d steps per run (the execution limit): lower the counts of the repeats in its branches, or split the run", count(n), MaxExecutions)
			continue
		}
		e.add(s.Pos, "this group would run %s steps, more than the limit of %d steps per run (the execution limit): lower the counts of its repeats, or split the run", count(n), MaxExecutions)
	}
}

func count(n uint64) string {
	if n == math.MaxUint64 {
		return "more than 18446744073709551615"
	}
	return fmt.Sprint(n)
}

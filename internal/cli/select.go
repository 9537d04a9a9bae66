package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/selectx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// SelectOptions are the flags that select cases by their tags and leave
// out those a quarantine list names (-m, --quarantine).
type SelectOptions struct {
	// Marker is the -m expression over tags; "" selects by no tags.
	Marker string
	// Quarantine is the --quarantine list's file; "" quarantines nothing.
	Quarantine string
}

func (o *SelectOptions) register(f *pflag.FlagSet) {
	f.StringVarP(&o.Marker, "mark", "m", "", "run only the sequences and groups whose tags make `EXPR` true: tags combined with and, or, not and parentheses, like 'smoke and not slow'; the rest are reported skipped")
	f.StringVar(&o.Quarantine, "quarantine", "", "do not run the sequences and groups that the quarantine list `FILE` names (a YAML list of {name: GLOB, reason: TEXT, benches: [NAME, ...]}): they are reported skipped with the reason")
}

// selection is what decides, beyond -k's choice of sequences, which
// sequences and groups of a run are skipped, and why: -k's choice among a
// matrix's cases, -m, and the quarantine list.
type selection struct {
	filter     filterExpr
	filterSrc  string
	marker     *selectx.Marker
	quarantine *selectx.Quarantine
}

// newSelection parses -k and -m and reads the quarantine list, through
// the command line's file gate. Each problem is invalid input.
func newSelection(filter string, o SelectOptions) (*selection, error) {
	s := &selection{filterSrc: filter}
	var err error
	if s.filter, err = parseFilter(filter); err != nil {
		return nil, invalid(err)
	}
	if o.Marker != "" {
		if s.marker, err = selectx.ParseMarker(o.Marker); err != nil {
			return nil, invalid(err)
		}
	}
	if o.Quarantine != "" {
		if s.quarantine, err = selectx.LoadQuarantine(hostGates().Files, o.Quarantine); err != nil {
			var el steps.ErrorList
			if errors.As(err, &el) {
				return nil, invalid(el)
			}
			return nil, invalid(fmt.Errorf("--quarantine %s: %w", o.Quarantine, err))
		}
	}
	return s, nil
}

// on reports whether the selection can skip anything at all.
func (s *selection) on() bool {
	return s != nil && (s.filterSrc != "" || s.marker != nil || s.quarantine != nil)
}

// mark returns seq with what the selection skips on the bench named
// bench marked, each with its reason (steps.Deselect): a sequence or
// group -m deselects, a matrix case -k does not match, and what the
// quarantine list names.
func (s *selection) mark(seq *steps.Sequence, bench string) *steps.Sequence {
	if !s.on() {
		return seq
	}
	return steps.Deselect(seq, func(c steps.Selected) string {
		name := seq.Name
		if c.Step != nil {
			name = c.Step.Name
			if s.filterSrc != "" && c.Step.Case != nil && !s.filter(caseNames(c)) {
				return fmt.Sprintf("deselected by -k %q", s.filterSrc)
			}
		}
		if s.marker != nil && !s.markerWants(c) {
			return fmt.Sprintf("deselected by -m %q", s.marker.String())
		}
		if e := s.quarantine.Lookup(name, bench); e != nil {
			return e.Why()
		}
		return ""
	})
}

// markerWants reports whether -m is true for c's tags or those of a group
// inside it: a group that holds a case -m selects runs, so that the case
// can.
func (s *selection) markerWants(c steps.Selected) bool {
	if s.marker.Match(c.Tags) {
		return true
	}
	found := false
	inside(c, func(in steps.Selected) { found = found || s.marker.Match(in.Tags) })
	return found
}

// inside calls fn for each group inside c (the sequence's groups when c
// is the sequence).
func inside(c steps.Selected, fn func(steps.Selected)) {
	if c.Step == nil {
		steps.Groups(c.Seq, fn)
		return
	}
	var walk func(ss []*steps.Step, tags, path []string)
	walk = func(ss []*steps.Step, tags, path []string) {
		for _, st := range ss {
			t, p := tags, path
			if st.Kind == steps.KindGroup {
				t = steps.UnionTags(st.Tags, tags)
				p = append(append([]string(nil), path...), st.Name)
				fn(steps.Selected{Seq: c.Seq, Step: st, Tags: t, Path: p})
			}
			walk(st.Steps, t, p)
		}
	}
	walk(c.Step.Steps, c.Tags, c.Path)
}

// caseNames are the names -k matches a matrix case by: its sequence's name
// and file name, the names of the groups around it, its own, and those of
// the groups inside it; not those of the other cases.
func caseNames(c steps.Selected) []string {
	names := []string{c.Seq.Name, strings.TrimSuffix(filepath.Base(c.Seq.File), filepath.Ext(c.Seq.File))}
	names = append(names, c.Path...)
	inside(c, func(in steps.Selected) { names = append(names, in.Step.Name) })
	return names
}

// benchName is the name a quarantine entry's benches: list matches
// outside a pool: sim under --sim, qemu under --qemu, else the --bench
// file's name without its .bench.yaml (or .yaml, .yml) ending, else none.
func benchName(o prepareOptions) string {
	switch {
	case o.Sim:
		return "sim"
	case o.QEMU:
		return "qemu"
	case o.Bench != "":
		base := filepath.Base(o.Bench)
		for _, ext := range []string{".bench.yaml", ".bench.yml", ".yaml", ".yml"} {
			if b, ok := strings.CutSuffix(base, ext); ok {
				return b
			}
		}
		return base
	}
	return ""
}

// markAll marks each sequence of seqs (mark), and refuses a -m that
// leaves nothing to run.
func (s *selection) markAll(seqs []*steps.Sequence, bench string) ([]*steps.Sequence, error) {
	out := make([]*steps.Sequence, len(seqs))
	deselected := 0
	for i, seq := range seqs {
		out[i] = s.mark(seq, bench)
		if s.marker != nil && out[i].Skip != "" && strings.HasPrefix(out[i].Skip, "deselected by -m") {
			deselected++
		}
	}
	if len(seqs) > 0 && deselected == len(seqs) {
		return nil, invalid(fmt.Errorf("-m %q selects none of the %s: no sequence or group has tags that make it true", s.marker.String(), count(len(seqs), "sequence")))
	}
	return out, nil
}

// listMarks is what --list says of a sequence beyond its name and groups:
// its tags, then each group's tags and why what is skipped would be, one
// indented line each.
func listMarks(seq *steps.Sequence) (tags string, lines []string) {
	if len(seq.Tags) > 0 {
		tags = " tags: " + strings.Join(seq.Tags, ", ")
	}
	if seq.Skip != "" {
		lines = append(lines, "  skipped: "+seq.Skip)
	}
	var walk func(ss []*steps.Step, why string)
	walk = func(ss []*steps.Step, why string) {
		for _, st := range ss {
			if st.Kind == steps.KindGroup && why == "" {
				var parts []string
				if len(st.Tags) > 0 {
					parts = append(parts, "tags: "+strings.Join(st.Tags, ", "))
				}
				if st.Skip != "" {
					parts = append(parts, "skipped: "+st.Skip)
				}
				if len(parts) > 0 {
					lines = append(lines, "  "+st.Name+" "+strings.Join(parts, "; "))
				}
			}
			w := why
			if w == "" {
				w = st.Skip
			}
			walk(st.Steps, w)
		}
	}
	if seq.Skip == "" {
		walk(seq.Steps, "")
	}
	return tags, lines
}

// dropQuarantine leaves the quarantine list out of the files a folder
// gave: a list kept beside the sequences is not one of them.
func dropQuarantine(files []string, quarantine string) []string {
	if quarantine == "" {
		return files
	}
	q, err := filepath.Abs(quarantine)
	if err != nil {
		return files
	}
	var out []string
	for _, f := range files {
		if a, err := filepath.Abs(f); err == nil && a == q {
			continue
		}
		out = append(out, f)
	}
	return out
}

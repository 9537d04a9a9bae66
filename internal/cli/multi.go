package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/steps"
)

// sequenceExts are the file name endings a folder's sequences have.
var sequenceExts = []string{".yaml", ".yml", ".json"}

// isBenchName reports whether a file's name says it is a bench file:
// hilrun.bench.yaml or *.bench.yaml (.yml).
func isBenchName(path string) bool {
	base := filepath.Base(path)
	return base == steps.BenchFile || strings.HasSuffix(base, ".bench.yaml") || strings.HasSuffix(base, ".bench.yml")
}

// isPoolName reports whether a file's name says it is a pool file:
// *.pool.yaml (.yml).
func isPoolName(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".pool.yaml") || strings.HasSuffix(base, ".pool.yml")
}

// expandFiles turns the arguments of run and validate into the files to
// load, in order: a file stays as it is; a folder gives the sequence files
// under it (*.yaml, *.yml, *.json, folders below included, bench files,
// pool files and hidden files and folders left out), sorted by path. A file named twice
// is loaded once, where it first appears. A folder without sequences is
// an error, so a typo in CI does not pass with nothing run.
func expandFiles(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	addFile := func(p string) {
		key := filepath.Clean(p)
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil || !fi.IsDir() {
			// A file that cannot be read is the loader's error, with its
			// name.
			addFile(arg)
			continue
		}
		var found []string
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if p != arg && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || isBenchName(p) || isPoolName(p) || !slices.Contains(sequenceExts, strings.ToLower(filepath.Ext(name))) {
				return nil
			}
			found = append(found, p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read folder %s: %w", arg, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("folder %s holds no sequence files (*.yaml, *.yml, *.json)", arg)
		}
		slices.Sort(found)
		for _, f := range found {
			addFile(f)
		}
	}
	return out, nil
}

// splitBenchFiles tells the bench files among files (isBenchFile) from the
// sequence files, keeping the order of each.
func splitBenchFiles(files []string) (seqs, benches []string) {
	for _, f := range files {
		if isBenchFile(f) {
			benches = append(benches, f)
		} else {
			seqs = append(seqs, f)
		}
	}
	return seqs, benches
}

// filterExpr is a -k expression over names, as pytest's: words matched as
// case-insensitive substrings, combined with and, or, not and
// parentheses.
type filterExpr func(names []string) bool

// parseFilter parses a -k expression. The empty expression matches
// everything.
func parseFilter(s string) (filterExpr, error) {
	toks := tokenizeFilter(s)
	if len(toks) == 0 {
		return func([]string) bool { return true }, nil
	}
	p := &filterParser{toks: toks}
	e, err := p.or()
	if err == nil && p.i < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	if err != nil {
		return nil, fmt.Errorf("-k %q: %w; want words combined with and, or, not and parentheses, like 'boot and not slow'", s, err)
	}
	return e, nil
}

func tokenizeFilter(s string) []string {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '(' || r == ')':
			flush()
			toks = append(toks, string(r))
		case unicode.IsSpace(r):
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks
}

type filterParser struct {
	toks []string
	i    int
}

func (p *filterParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *filterParser) or() (filterExpr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "or" {
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = func(a, b filterExpr) filterExpr { return func(n []string) bool { return a(n) || b(n) } }(l, r)
	}
	return l, nil
}

func (p *filterParser) and() (filterExpr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek() == "and" {
		p.i++
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = func(a, b filterExpr) filterExpr { return func(n []string) bool { return a(n) && b(n) } }(l, r)
	}
	return l, nil
}

func (p *filterParser) not() (filterExpr, error) {
	if p.peek() == "not" {
		p.i++
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(n []string) bool { return !e(n) }, nil
	}
	return p.term()
}

func (p *filterParser) term() (filterExpr, error) {
	t := p.peek()
	switch t {
	case "":
		return nil, errors.New("the expression ends too early")
	case ")", "and", "or":
		return nil, fmt.Errorf("unexpected %q", t)
	case "(":
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, errors.New("a ( is not closed")
		}
		p.i++
		return e, nil
	}
	p.i++
	word := strings.ToLower(t)
	return func(names []string) bool {
		for _, n := range names {
			if strings.Contains(strings.ToLower(n), word) {
				return true
			}
		}
		return false
	}, nil
}

// filterNames are the names a -k expression matches a sequence by: its
// name, its file's name without the extension, and the names of its
// groups.
func filterNames(seq *steps.Sequence) []string {
	names := []string{seq.Name, strings.TrimSuffix(filepath.Base(seq.File), filepath.Ext(seq.File))}
	steps.Walk(seq, func(s *steps.Step) {
		if s.Kind == steps.KindGroup && s.Name != "" {
			names = append(names, s.Name)
		}
	})
	return names
}

// selectSequences keeps the sequences the -k expression matches, in
// order: a pure function of its inputs, so that the files a run takes are
// known before it starts.
func selectSequences(seqs []*steps.Sequence, match filterExpr) []*steps.Sequence {
	var out []*steps.Sequence
	for _, s := range seqs {
		if match(filterNames(s)) {
			out = append(out, s)
		}
	}
	return out
}

// addSelectFlags adds -k/--filter and --list.
func addSelectFlags(f *pflag.FlagSet, filter *string, list *bool) {
	f.StringVarP(filter, "filter", "k", "", "run only the sequences whose name, file name or a group's name matches `EXPR`: words (case-insensitive substrings) with and, or, not, parentheses")
	f.BoolVar(list, "list", false, "print the sequences that would run, one a line, and run none")
}

// listSequences prints, for --list, each sequence that would run: its
// file, its name, how many steps it has and its groups.
func listSequences(w io.Writer, seqs []*steps.Sequence, retries int) error {
	for _, s := range seqs {
		var groups []string
		steps.Walk(s, func(st *steps.Step) {
			if st.Kind == steps.KindGroup && st.Name != "" {
				groups = append(groups, st.Name)
			}
		})
		tags, marks := listMarks(s)
		line := fmt.Sprintf("%s: %s (%s)%s", s.File, s.Name, steps.CountedPlan(s), tags)
		if len(groups) > 0 {
			line += " groups: " + strings.Join(groups, ", ")
		}
		line += retryNote(s, retries)
		for _, m := range append([]string{line}, marks...) {
			if _, err := fmt.Fprintln(w, m); err != nil {
				return infra(err)
			}
		}
	}
	if len(seqs) == 1 {
		fmt.Fprintln(w, "1 sequence")
	} else {
		fmt.Fprintf(w, "%d sequences\n", len(seqs))
	}
	return nil
}

// skipBenchFiles leaves the bench files out of the files run was given
// (sequences/boards/*.yaml names one), saying so: each sequence reads the
// bench file beside it, or --bench, anyway. Bench files alone are an
// error.
func skipBenchFiles(ios *IO, files []string) ([]string, error) {
	seqs, benches := splitBenchFiles(files)
	for _, b := range benches {
		fmt.Fprintf(ios.ErrOut, "hilrun: %s is a bench file, not a sequence: not run (a sequence reads the bench file beside it, or --bench FILE)\n", b)
	}
	if len(seqs) == 0 {
		return nil, invalid(errors.New("no sequence files to run: bench files bind sequences, pass them with --bench FILE"))
	}
	return seqs, nil
}

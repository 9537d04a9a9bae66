package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// suiteSpan is a testsuite of a JUnit report: its counts, and where its
// element starts in the file.
type suiteSpan struct {
	name, seqFile         string
	tests, failures, errs int
	skipped               int
	millis                int64
	file                  string
	start                 int64
	shard                 *Shard
	// bench says the suite is a bench's recoveries, no sequence's.
	bench bool
}

func (s suiteSpan) key() string { return sequenceKey(s.seqFile, s.name) }

// scanJUnit checks that path is a JUnit report with a testsuites root and
// finds its testsuites.
func scanJUnit(fs files.Policy, path string) ([]suiteSpan, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	notReport := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s; want the JUnit XML file hilrun run --junit writes", path, ErrNotReport, fmt.Sprintf(format, args...))
	}
	d := xml.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	var spans []suiteSpan
	depth := 0
	rooted := false
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, notReport("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case depth == 0 && t.Name.Local == "testsuites" && !rooted:
				rooted = true
				depth++
			case depth == 0:
				return nil, notReport("the root element is <%s>, not <testsuites>", t.Name.Local)
			case t.Name.Local == "testsuite":
				var s junit.Testsuite
				if err := d.DecodeElement(&s, &t); err != nil {
					return nil, notReport("testsuite %d: %v", len(spans)+1, err)
				}
				span, err := countSuite(&s)
				if err != nil {
					return nil, notReport("testsuite %d (%s): %v", len(spans)+1, s.Name, err)
				}
				span.file, span.start = path, off
				spans = append(spans, span)
			default:
				return nil, notReport("<testsuites> holds a <%s>, want only <testsuite>", t.Name.Local)
			}
		case xml.EndElement:
			depth--
		}
	}
	if !rooted {
		return nil, notReport("it has no <testsuites> element")
	}
	return spans, nil
}

// countSuite counts a testsuite from its testcases, which must agree with
// what its attributes say.
func countSuite(s *junit.Testsuite) (suiteSpan, error) {
	span := suiteSpan{name: s.Name}
	for _, tc := range s.Testcases {
		span.tests++
		switch {
		case tc.Error != nil:
			span.errs++
		case tc.Failure != nil:
			span.failures++
		case tc.Skipped != nil:
			span.skipped++
		}
	}
	if span.tests != s.Tests || span.failures != s.Failures || span.errs != s.Errors || span.skipped != s.Skipped {
		return span, fmt.Errorf("its counts (tests %d, failures %d, errors %d, skipped %d) do not match its testcases (%d, %d, %d, %d)",
			s.Tests, s.Failures, s.Errors, s.Skipped, span.tests, span.failures, span.errs, span.skipped)
	}
	ms, err := parseSeconds(s.Time)
	if err != nil {
		return span, err
	}
	span.millis = ms
	if span.shard, err = shardFromProperties(s.Properties); err != nil {
		return span, err
	}
	span.seqFile = s.File
	if s.Properties != nil {
		for _, p := range *s.Properties {
			switch {
			case p.Name == "file" && span.seqFile == "":
				span.seqFile = p.Value
			case p.Name == recoveryProperty:
				span.bench = true
			}
		}
	}
	return span, nil
}

// parseSeconds reads a JUnit time in seconds as whole milliseconds, so
// that sums are exact.
func parseSeconds(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e12 {
		return 0, fmt.Errorf("time %q is not a duration in seconds", s)
	}
	return int64(math.Round(f * 1000)), nil
}

// MergeJUnit writes to w one JUnit report holding the testsuites of the
// JUnit reports at paths (the shards of a run), ordered by file and then
// name, with the totals of <testsuites> (tests, failures, errors and
// time, the sum of the suites' times) counted again and the suites' ids
// renumbered. Each testcase is copied whole: its properties (the
// measurements) and the flakyFailure, flakyError, rerunFailure and
// rerunError elements of its earlier attempts included. A testsuite in
// two reports is an error naming it and them, and nothing is written.
// One testsuite is in memory at a time.
func MergeJUnit(w io.Writer, fs files.Policy, paths []string) error {
	var spans []suiteSpan
	var shards []shardInput
	for _, p := range paths {
		s, err := scanJUnit(fs, p)
		if err != nil {
			return err
		}
		spans = append(spans, s...)
		in := shardInput{file: p, count: len(s)}
		for i, sp := range s {
			if i == 0 {
				in.shard = sp.shard
			} else if (sp.shard == nil) != (in.shard == nil) || sp.shard != nil && *sp.shard != *in.shard {
				return fmt.Errorf("merge junit reports: %w: the testsuites of %s say different shards", ErrShards, p)
			}
		}
		shards = append(shards, in)
	}
	spans, benches := splitBenchSpans(spans)
	incomplete, err := checkShards(shards, len(spans))
	if err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	if err := sortSuites(spans); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	spans = append(spans, benches...)
	var tests, failures, errs int
	var millis int64
	for _, s := range spans {
		tests += s.tests
		failures += s.failures
		errs += s.errs
		millis += s.millis
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := io.WriteString(bw, xml.Header); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	enc := xml.NewEncoder(bw)
	enc.Indent("", "\t")
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}}
	root.Attr = appendAttrs(root.Attr, "name", "hilrun", "time", strconv.FormatFloat(float64(millis)/1000, 'f', 3, 64))
	// junit-10 counts only tests, errors and failures on <testsuites>.
	root.Attr = appendCounts(root.Attr, true, "tests", tests, "errors", errs, "failures", failures)
	if err := enc.EncodeToken(root); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i, s := range spans {
		f := files[s.file]
		if f == nil {
			var err error
			if f, err = fs.Open(s.file); err != nil {
				return fmt.Errorf("merge junit reports: %w", err)
			}
			files[s.file] = f
		}
		suite, err := readSuite(io.NewSectionReader(f, s.start, math.MaxInt64-s.start))
		if err != nil {
			return fmt.Errorf("merge junit reports: read %s: %w", s.file, err)
		}
		suite.ID = i
		suite.Disabled = 0 // not a junit-10 attribute of <testsuite>
		if suite.Properties != nil {
			// The merged report is the whole run, no shard.
			props := slices.DeleteFunc(*suite.Properties, func(p junit.Property) bool { return isShardProperty(p.Name) })
			suite.Properties = &props
			if len(props) == 0 {
				suite.Properties = nil
			}
		}
		if err := enc.EncodeElement(suite, xml.StartElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
			return fmt.Errorf("merge junit reports: %w", err)
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	if err := enc.Flush(); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	if _, err := io.WriteString(bw, "\n"); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	return incomplete
}

// sortSuites sorts the sequences' suites by file and name, after checking
// that no sequence is in two of them.
func sortSuites(spans []suiteSpan) error {
	if err := checkUnique(spans, suiteSpan.key,
		func(s suiteSpan) string { return describe(s.name, s.seqFile) },
		func(s suiteSpan) string { return s.file }); err != nil {
		return err
	}
	slices.SortStableFunc(spans, func(a, b suiteSpan) int {
		return strings.Compare(a.key()+"\x00"+a.name, b.key()+"\x00"+b.name)
	})
	return nil
}

// splitBenchSpans tells the sequences' suites from the benches' recovery
// suites, which follow the sequences in a merge, each shard's as it was:
// two shards may have had benches of one name.
func splitBenchSpans(spans []suiteSpan) (seqs, benches []suiteSpan) {
	for _, s := range spans {
		if s.bench {
			benches = append(benches, s)
		} else {
			seqs = append(seqs, s)
		}
	}
	return seqs, benches
}

// readSuite decodes the first testsuite element of r.
func readSuite(r io.Reader) (*mergeSuite, error) {
	d := xml.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, readErr(err)
		}
		if t, ok := tok.(xml.StartElement); ok {
			if t.Name.Local != "testsuite" {
				return nil, fmt.Errorf("found <%s> where a <testsuite> was: the file changed while it was read", t.Name.Local)
			}
			var s mergeSuite
			if err := d.DecodeElement(&s, &t); err != nil {
				return nil, err
			}
			s.keepReruns()
			return &s, nil
		}
	}
}

// JUnitSequences names the sequences (testsuites) of the JUnit reports at
// paths, by key (SequenceHead.Key).
func JUnitSequences(fs files.Policy, paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		spans, err := scanJUnit(fs, p)
		if err != nil {
			return nil, err
		}
		for _, s := range spans {
			out[s.key()] = describe(s.name, s.seqFile)
		}
	}
	return out, nil
}

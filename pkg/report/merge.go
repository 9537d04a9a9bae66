package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
)

// ErrNotReport is wrapped by the errors of ReadSequences, MergeJSON and
// MergeJUnit for an input that is not a report hilrun wrote: invalid
// input, not a failure to read.
var ErrNotReport = errors.New("not a hilrun report")

// ErrDuplicate is wrapped by the errors of MergeJSON and MergeJUnit when
// two reports hold the same sequence.
var ErrDuplicate = errors.New("each sequence runs in one shard only")

// SequenceHead is what a JSON report says about one sequence, steps left
// out.
type SequenceHead struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Status string `json:"status"`
	// Interrupted is true when Ctrl-C or SIGTERM stopped the sequence.
	Interrupted bool           `json:"interrupted,omitempty"`
	DurationMS  results.Millis `json:"duration_ms"`
	Counts      results.Counts `json:"counts"`
}

// Key is what tells sequences apart across reports: the file it came
// from (slash-separated, cleaned), else its name.
func (h SequenceHead) Key() string { return sequenceKey(h.File, h.Name) }

func sequenceKey(file, name string) string {
	if file != "" {
		return filepath.ToSlash(filepath.Clean(file))
	}
	return "name:" + name
}

// describe names a sequence for an error message.
func describe(name, file string) string {
	if file == "" {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%q (%s)", name, file)
}

// jsonSpan is a sequence of a JSON report: its head, and where its object
// lies in the file.
type jsonSpan struct {
	SequenceHead
	file       string
	start, end int64
}

// ReadSequences reads the sequences of the JSON report at path (written
// by hilrun run --json), in their order. One sequence's object is in
// memory at a time, so memory is bounded by the largest sequence, not by
// the report.
func ReadSequences(path string) ([]SequenceHead, error) {
	spans, err := scanJSON(path)
	if err != nil {
		return nil, err
	}
	out := make([]SequenceHead, len(spans))
	for i, s := range spans {
		out[i] = s.SequenceHead
	}
	return out, nil
}

// scanJSON checks that path is a hilrun JSON report and finds its
// sequences.
func scanJSON(path string) ([]jsonSpan, error) {
	spans, _, err := scanShardJSON(path)
	return spans, err
}

// scanShardJSON is scanJSON that also returns the report's shard, nil
// when it is not one.
func scanShardJSON(path string) ([]jsonSpan, *Shard, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	notReport := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s; want the JSON file hilrun run --json writes", path, ErrNotReport, fmt.Sprintf(format, args...))
	}
	d := json.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, nil, notReport("%v", readErr(err))
	}
	if tok != json.Delim('{') {
		return nil, nil, notReport("it is not a JSON object")
	}
	var spans []jsonSpan
	var shard *Shard
	sawSequences := false
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, nil, notReport("%v", readErr(err))
		}
		key, _ := tok.(string)
		if key == "shard" {
			shard = &Shard{}
			if err := d.Decode(shard); err != nil {
				return nil, nil, notReport("shard: %v", readErr(err))
			}
			if err := shard.check(); err != nil {
				return nil, nil, notReport("%v", err)
			}
			continue
		}
		if key != "sequences" {
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return nil, nil, notReport("%v", readErr(err))
			}
			continue
		}
		if sawSequences {
			return nil, nil, notReport(`"sequences" appears twice`)
		}
		sawSequences = true
		if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
			return nil, nil, notReport(`"sequences" is not a list`)
		}
		for d.More() {
			start := d.InputOffset()
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return nil, nil, notReport("sequence %d: %v", len(spans)+1, readErr(err))
			}
			end := d.InputOffset()
			var head struct {
				Name        *string         `json:"name"`
				File        *string         `json:"file"`
				Status      *string         `json:"status"`
				Interrupted bool            `json:"interrupted"`
				DurationMS  *results.Millis `json:"duration_ms"`
				Counts      *results.Counts `json:"counts"`
			}
			if err := json.Unmarshal(raw, &head); err != nil || head.Name == nil || head.File == nil || head.Status == nil || head.DurationMS == nil || head.Counts == nil {
				return nil, nil, notReport(`sequence %d lacks a name, file, status, duration_ms or counts`, len(spans)+1)
			}
			if ms := float64(*head.DurationMS); ms < 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
				return nil, nil, notReport("sequence %d: duration_ms %v is not a duration", len(spans)+1, ms)
			}
			// The offset before a value may stand before the comma that
			// separates it from the previous one.
			spans = append(spans, jsonSpan{
				SequenceHead: SequenceHead{Name: *head.Name, File: *head.File, Status: *head.Status, Interrupted: head.Interrupted, DurationMS: *head.DurationMS, Counts: *head.Counts},
				file:         path, start: start, end: end,
			})
		}
		if _, err := d.Token(); err != nil {
			return nil, nil, notReport("%v", readErr(err))
		}
	}
	if _, err := d.Token(); err != nil {
		return nil, nil, notReport("%v", readErr(err))
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, nil, notReport("more follows the report's object")
	}
	if !sawSequences {
		return nil, nil, notReport(`it has no "sequences" list`)
	}
	return spans, shard, nil
}

// readErr says that a file ended early rather than "EOF".
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the file ends early")
	}
	return err
}

// checkUnique fails when two spans stand for the same sequence, naming it
// and the files that hold it.
func checkUnique[T any](items []T, key func(T) string, name func(T) string, src func(T) string) error {
	seen := map[string]T{}
	var dups []string
	for _, it := range items {
		k := key(it)
		if prev, ok := seen[k]; ok {
			where := fmt.Sprintf("in both %s and %s", src(prev), src(it))
			if src(prev) == src(it) {
				where = "twice in " + src(it)
			}
			dups = append(dups, fmt.Sprintf("sequence %s is %s", name(it), where))
			continue
		}
		seen[k] = it
	}
	if len(dups) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(dups, "; "), ErrDuplicate)
	}
	return nil
}

// MergeJSON writes to w one JSON report holding the sequences of the JSON
// reports at paths (the shards of a run), ordered by file and then name,
// so that the order of paths does not matter. "passed" is true when there
// is at least one sequence and every one passed, as for a single run. A
// sequence in two reports is an error naming it and them, and nothing is
// written. Each sequence is copied as it stands; one is in memory at a
// time.
func MergeJSON(w io.Writer, paths []string) error {
	var spans []jsonSpan
	var shards []shardInput
	for _, p := range paths {
		s, sh, err := scanShardJSON(p)
		if err != nil {
			return err
		}
		spans = append(spans, s...)
		shards = append(shards, shardInput{file: p, shard: sh, count: len(s)})
	}
	incomplete, err := checkShards(shards, len(spans))
	if err != nil {
		return fmt.Errorf("merge json reports: %w", err)
	}
	if err := checkUnique(spans, func(s jsonSpan) string { return s.Key() },
		func(s jsonSpan) string { return describe(s.Name, s.File) },
		func(s jsonSpan) string { return s.file }); err != nil {
		return fmt.Errorf("merge json reports: %w", err)
	}
	slices.SortStableFunc(spans, func(a, b jsonSpan) int {
		return strings.Compare(a.Key()+"\x00"+a.Name, b.Key()+"\x00"+b.Name)
	})
	passed, interrupted := len(spans) > 0, false
	for _, s := range spans {
		passed = passed && s.Status == "passed"
		interrupted = interrupted || s.Interrupted
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	jw := &jsonWriter{w: bw}
	jw.printf("{\n  \"passed\": %t,\n", passed)
	if interrupted {
		jw.printf("  \"interrupted\": true,\n")
	}
	jw.printf("  \"sequences\": [")
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var buf, out bytes.Buffer
	for i, s := range spans {
		f := files[s.file]
		if f == nil {
			var err error
			if f, err = os.Open(s.file); err != nil {
				return fmt.Errorf("merge json reports: %w", err)
			}
			files[s.file] = f
		}
		buf.Reset()
		if _, err := io.Copy(&buf, io.NewSectionReader(f, s.start, s.end-s.start)); err != nil {
			return fmt.Errorf("merge json reports: read %s: %w", s.file, err)
		}
		raw := bytes.TrimLeft(buf.Bytes(), " \t\r\n,")
		out.Reset()
		if err := json.Indent(&out, raw, "    ", "  "); err != nil {
			return fmt.Errorf("merge json reports: %s changed while it was read: %w", s.file, err)
		}
		if i > 0 {
			jw.printf(",")
		}
		jw.printf("\n    %s", out.Bytes())
	}
	if len(spans) > 0 {
		jw.printf("\n  ")
	}
	jw.printf("]\n}\n")
	if jw.err == nil {
		jw.err = bw.Flush()
	}
	if jw.err != nil {
		return fmt.Errorf("merge json reports: %w", jw.err)
	}
	return incomplete
}

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
}

func (s suiteSpan) key() string { return sequenceKey(s.seqFile, s.name) }

// scanJUnit checks that path is a JUnit report with a testsuites root and
// finds its testsuites.
func scanJUnit(path string) ([]suiteSpan, error) {
	f, err := os.Open(path)
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
	if span.seqFile == "" && s.Properties != nil {
		for _, p := range *s.Properties {
			if p.Name == "file" {
				span.seqFile = p.Value
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
// renumbered. A testsuite in two reports is an error naming it and
// them, and nothing is written. One testsuite is in memory at a time.
func MergeJUnit(w io.Writer, paths []string) error {
	var spans []suiteSpan
	var shards []shardInput
	for _, p := range paths {
		s, err := scanJUnit(p)
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
	incomplete, err := checkShards(shards, len(spans))
	if err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	if err := checkUnique(spans, suiteSpan.key,
		func(s suiteSpan) string { return describe(s.name, s.seqFile) },
		func(s suiteSpan) string { return s.file }); err != nil {
		return fmt.Errorf("merge junit reports: %w", err)
	}
	slices.SortStableFunc(spans, func(a, b suiteSpan) int {
		return strings.Compare(a.key()+"\x00"+a.name, b.key()+"\x00"+b.name)
	})
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
			if f, err = os.Open(s.file); err != nil {
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

// readSuite decodes the first testsuite element of r.
func readSuite(r io.Reader) (*junit.Testsuite, error) {
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
			var s junit.Testsuite
			if err := d.DecodeElement(&s, &t); err != nil {
				return nil, err
			}
			return &s, nil
		}
	}
}

// JSONSequences names the sequences of the JSON reports at paths, by key
// (SequenceHead.Key).
func JSONSequences(paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		spans, err := scanJSON(p)
		if err != nil {
			return nil, err
		}
		for _, s := range spans {
			out[s.Key()] = describe(s.Name, s.File)
		}
	}
	return out, nil
}

// JUnitSequences names the sequences (testsuites) of the JUnit reports at
// paths, by key (SequenceHead.Key).
func JUnitSequences(paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		spans, err := scanJUnit(p)
		if err != nil {
			return nil, err
		}
		for _, s := range spans {
			out[s.key()] = describe(s.name, s.seqFile)
		}
	}
	return out, nil
}

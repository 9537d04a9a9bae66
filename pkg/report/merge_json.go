package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
)

// jsonSpan is a sequence of a JSON report: its head, and where its object
// lies in the file.
type jsonSpan struct {
	SequenceHead
	file       string
	start, end int64
	// shard is the shard of the report it is in, nil for none; input
	// numbers that report among those merged, from 0.
	shard *Shard
	input int
}

// ReadSequences reads the sequences of the JSON report at path (written
// by hilrun run --json), in their order. One sequence's object is in
// memory at a time, so memory is bounded by the largest sequence, not by
// the report.
func ReadSequences(fs files.Policy, path string) ([]SequenceHead, error) {
	spans, err := scanJSON(fs, path)
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
func scanJSON(fs files.Policy, path string) ([]jsonSpan, error) {
	spans, _, err := scanShardJSON(fs, path)
	return spans, err
}

// scanShardJSON is scanJSON that also returns the report's shard, nil
// when it is not one.
func scanShardJSON(fs files.Policy, path string) ([]jsonSpan, *Shard, error) {
	f, err := fs.Open(path)
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
				Flaky       bool            `json:"flaky"`
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
				SequenceHead: SequenceHead{Name: *head.Name, File: *head.File, Status: *head.Status, Interrupted: head.Interrupted, Flaky: head.Flaky, DurationMS: *head.DurationMS, Counts: *head.Counts},
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

// MergeJSON writes to w one JSON report holding the sequences of the JSON
// reports at paths (the shards of a run), ordered by file and then name,
// so that the order of paths does not matter. "passed" is true when there
// is at least one sequence and every one passed and no shard was stopped
// by an interrupt during a climb of a bench's ladder (then "interrupted"
// is true), and "flaky" when one
// passed only after a retry, as for a single run. A
// sequence in two reports is an error naming it and them, and nothing is
// written. Each sequence is copied as it stands, its steps, attempts and
// measurements included; one is in memory at a time. The shards'
// recoveries and bad benches follow, in the order of paths.
func MergeJSON(w io.Writer, fs files.Policy, paths []string) error {
	spans, incomplete, err := mergeInputs(fs, paths)
	if err != nil {
		return fmt.Errorf("merge json reports: %w", err)
	}
	var benches results.Benches
	for _, p := range paths {
		if err := readJSONBenches(fs, p, &benches); err != nil {
			return fmt.Errorf("merge json reports: %w", err)
		}
	}
	// A shard that an interrupt stopped during a climb of a bench's
	// ladder did not pass, whatever its sequences did.
	stopped := benches.ClimbInterrupted()
	passed, interrupted, flaky := len(spans) > 0 && !stopped, stopped, false
	for _, s := range spans {
		passed = passed && s.Status == "passed"
		interrupted = interrupted || s.Interrupted
		flaky = flaky || s.Flaky
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	jw := &jsonWriter{w: bw}
	jw.printf("{\n  \"passed\": %t,\n", passed)
	if flaky {
		jw.printf("  \"flaky\": true,\n")
	}
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
			if f, err = fs.Open(s.file); err != nil {
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
	jw.printf("]")
	writeJSONBenches(jw, &benches)
	jw.printf("\n}\n")
	if jw.err == nil {
		jw.err = bw.Flush()
	}
	if jw.err != nil {
		return fmt.Errorf("merge json reports: %w", jw.err)
	}
	return incomplete
}

// JSONSequences names the sequences of the JSON reports at paths, by key
// (SequenceHead.Key).
func JSONSequences(fs files.Policy, paths []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range paths {
		spans, err := scanJSON(fs, p)
		if err != nil {
			return nil, err
		}
		for _, s := range spans {
			out[s.Key()] = describe(s.Name, s.File)
		}
	}
	return out, nil
}

// mergeInputs reads the JSON reports at paths and checks that they are
// the shards of one run, or none is a shard, and that each sequence is in
// one of them only. It returns their sequences ordered by file and then
// name, and an *IncompleteError, to return once the merged report is
// written, when sequences are missing.
func mergeInputs(fs files.Policy, paths []string) (spans []jsonSpan, incomplete, err error) {
	var shards []shardInput
	for i, p := range paths {
		s, sh, err := scanShardJSON(fs, p)
		if err != nil {
			return nil, nil, err
		}
		for j := range s {
			s[j].shard, s[j].input = sh, i
		}
		spans = append(spans, s...)
		shards = append(shards, shardInput{file: p, shard: sh, count: len(s)})
	}
	if incomplete, err = checkShards(shards, len(spans)); err != nil {
		return nil, nil, err
	}
	if err := checkUnique(spans, func(s jsonSpan) string { return s.Key() },
		func(s jsonSpan) string { return describe(s.Name, s.File) },
		func(s jsonSpan) string { return s.file }); err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(spans, func(a, b jsonSpan) int {
		return strings.Compare(a.Key()+"\x00"+a.Name, b.Key()+"\x00"+b.Name)
	})
	return spans, incomplete, nil
}

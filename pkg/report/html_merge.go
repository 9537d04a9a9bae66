package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// MergeHTML writes to w one HTML page of the JSON reports at paths (the
// shards of a run, written by hilrun run --json), as MergeJSON merges
// them: every sequence once, ordered by file, each with its steps (by
// the same bounds as WriteHTML), attempts, flaky mark and its table and
// plots of measurements, iterations included. Above the sequences the
// page shows each measurement over the whole run: a table of its values
// per shard and a plot of them in shard order, repeat iterations in the
// order measured, with the shards' boundaries drawn. The consoles,
// pictures and memory plots stay in the shards' own HTML reports: a JSON
// report does not hold them. The inputs are checked as MergeJSON checks
// them, with the same errors; one sequence is in memory at a time.
func MergeHTML(w io.Writer, fs files.Policy, paths []string, opts HTMLOptions) error {
	spans, incomplete, err := mergeInputs(fs, paths)
	if err != nil {
		return fmt.Errorf("merge html report: %w", err)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	m := &htmlMerge{fs: fs, paths: paths, files: map[string]*os.File{}}
	defer m.closeFiles()
	runs, err := m.measures(spans)
	if err != nil {
		return fmt.Errorf("merge html report: %w", err)
	}
	// The page reads only the JSON reports: no console log or picture
	// their steps name is opened.
	opts.Files, opts.ConsoleDir = files.Policy{}, nil
	var benches results.Benches
	for _, p := range paths {
		if err := readJSONBenches(fs, p, &benches); err != nil {
			return fmt.Errorf("merge html report: %w", err)
		}
	}
	stopped := benches.ClimbInterrupted()
	d := &htmlData{opts: opts}
	heads := make([]results.Sequence, len(spans))
	passed, interrupted := len(spans) > 0 && !stopped, stopped
	for i, s := range spans {
		heads[i] = results.Sequence{Name: s.Name, Status: headStatus(s.SequenceHead)}
		passed = passed && s.Status == "passed"
		interrupted = interrupted || s.Interrupted
	}
	err = writePage(w, d, htmlTitle(heads, stopped), func() error {
		d.open(passed, interrupted, opts.Info, now())
		for i := range spans {
			if err := m.sequence(d, i, &spans[i]); err != nil {
				return err
			}
		}
		d.close(func() {
			d.printf(`,"merged":`)
			d.value(m.reports(spans))
			d.printf(`,"shard_measurements":`)
			d.value(runs.rows())
		})
		return d.w.err
	})
	if err != nil {
		return fmt.Errorf("merge html report: %w", err)
	}
	return incomplete
}

// headStatus is a sequence's status as the page takes it.
func headStatus(h SequenceHead) runner.Status {
	if h.Interrupted {
		return runner.Interrupted
	}
	return runner.Status(h.Status)
}

// htmlMerge reads the sequences of the reports merged.
type htmlMerge struct {
	fs    files.Policy
	paths []string
	files map[string]*os.File
}

func (m *htmlMerge) closeFiles() {
	for _, f := range m.files {
		f.Close()
	}
}

// open returns a decoder of the object of sequence s.
func (m *htmlMerge) open(s *jsonSpan) (*json.Decoder, error) {
	f := m.files[s.file]
	if f == nil {
		var err error
		if f, err = m.fs.Open(s.file); err != nil {
			return nil, err
		}
		m.files[s.file] = f
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, s.start, s.end-s.start), 64<<10)
	// The span may start at the comma before the object.
	for {
		c, err := br.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.file, readErr(err))
		}
		if !strings.ContainsRune(" \t\r\n,", rune(c)) {
			br.UnreadByte()
			break
		}
	}
	d := json.NewDecoder(br)
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%s changed while it was read", s.file)
	}
	return d, nil
}

// eachKey calls fn with each key of the object d is in, which reads its
// value.
func eachKey(d *json.Decoder, fn func(key string) error) error {
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := fn(key); err != nil {
			return err
		}
	}
	_, err := d.Token()
	return err
}

// eachElem calls fn for each element of the list d's next value is.
func eachElem(d *json.Decoder, fn func() error) error {
	if tok, err := d.Token(); err != nil || tok != json.Delim('[') {
		if err == nil {
			err = fmt.Errorf("found %v where a list was", tok)
		}
		return err
	}
	for d.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	_, err := d.Token()
	return err
}

// sequence writes the page's entry of sequence i from its object in a
// JSON report.
func (m *htmlMerge) sequence(d *htmlData, i int, s *jsonSpan) error {
	dec, err := m.open(s)
	if err != nil {
		return err
	}
	seq := results.Sequence{Name: s.Name, File: s.File, Status: headStatus(s.SequenceHead), DurationMS: s.DurationMS, Flaky: s.Flaky}
	started := false
	start := func() {
		if !started {
			started = true
			d.startSequence(i, &seq)
		}
	}
	err = eachKey(dec, func(key string) error {
		switch key {
		case "error":
			return dec.Decode(&seq.Error)
		case "attempts":
			return dec.Decode(&seq.Attempts)
		case "steps":
			start()
			return eachElem(dec, func() error {
				var st results.Step
				if err := dec.Decode(&st); err != nil {
					return err
				}
				st.Attachments = nil
				if st.Kind == "mem_read" || st.Kind == "mem_poll" {
					d.memPoint(&st)
				}
				d.step(&st)
				return d.w.err
			})
		case "measurements":
			start()
			return eachElem(dec, func() error {
				var r results.MeasureRecord
				if err := dec.Decode(&r); err != nil {
					return err
				}
				d.seq.measures.add(recordStep(&r))
				return nil
			})
		}
		var skip json.RawMessage
		return dec.Decode(&skip)
	})
	if err != nil {
		return fmt.Errorf("read %s: sequence %s: %w", s.file, describe(s.Name, s.File), readErr(err))
	}
	start()
	d.endSequence(&seq, s.Counts)
	return d.w.err
}

// recordStep is the step a measurement of a JSON report was made by, as
// the page's measurement table takes it.
func recordStep(r *results.MeasureRecord) *results.Step {
	return &results.Step{StepBase: results.StepBase{Path: r.Step, Kind: "measure", Name: r.StepName, Status: r.Outcome, StartedMS: r.StartedMS,
		Measurement: &runner.Measurement{Name: r.Name, Value: r.Value, Unit: r.Unit, Min: r.Min, Max: r.Max, Equals: r.Equals, Regex: r.Regex, Outcome: r.Outcome}}}
}

// mergedReport is one report merged, as the page names it.
type mergedReport struct {
	File      string `json:"file"`
	Shard     string `json:"shard,omitempty"`
	Sequences int    `json:"sequences"`
}

func (m *htmlMerge) reports(spans []jsonSpan) []mergedReport {
	out := make([]mergedReport, len(m.paths))
	for i, p := range m.paths {
		out[i].File = filepath.Base(p)
	}
	for _, s := range spans {
		r := &out[s.input]
		r.Sequences++
		if s.shard != nil {
			r.Shard = s.shard.String()
		}
	}
	return out
}

// shardLabel names the shard a sequence ran in: "shard 2/4", or the
// report's file name when the reports are not shards.
func (m *htmlMerge) shardLabel(s *jsonSpan) string {
	if s.shard != nil {
		return "shard " + s.shard.String()
	}
	return filepath.Base(m.paths[s.input])
}

// measures reads the measurements of every sequence, shard by shard, for
// the page's plots over the whole run.
func (m *htmlMerge) measures(spans []jsonSpan) (*shardMeasures, error) {
	order := slices.Clone(spans)
	shardOf := func(s jsonSpan) int {
		if s.shard != nil {
			return s.shard.Index
		}
		return s.input
	}
	slices.SortStableFunc(order, func(a, b jsonSpan) int { return shardOf(a) - shardOf(b) })
	out := &shardMeasures{}
	for i := range order {
		s := &order[i]
		dec, err := m.open(s)
		if err != nil {
			return nil, err
		}
		label := m.shardLabel(s)
		err = eachKey(dec, func(key string) error {
			if key == "steps" {
				// One step at a time: a sequence may hold many.
				return eachElem(dec, func() error {
					var skip json.RawMessage
					return dec.Decode(&skip)
				})
			}
			if key != "measurements" {
				var skip json.RawMessage
				return dec.Decode(&skip)
			}
			return eachElem(dec, func() error {
				var r results.MeasureRecord
				if err := dec.Decode(&r); err != nil {
					return err
				}
				out.add(label, &r)
				return nil
			})
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: sequence %s: %w", s.file, describe(s.Name, s.File), readErr(err))
		}
	}
	return out, nil
}

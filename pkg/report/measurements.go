package report

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// measureCSVHeader names the columns of WriteMeasurementsCSV.
var measureCSVHeader = []string{"sequence", "file", "step", "step_name", "iteration", "name", "value", "unit",
	"min", "max", "equals", "regex", "outcome", "started_ms"}

// WriteMeasurementsCSV writes every measurement recorded in the event
// file events to w as CSV (RFC 4180), one row per measurement,
// iterations included, in the order they were made, under a header row:
// sequence, file, step (its path), step_name, iteration (of the
// innermost repeat; empty outside repeats), name, value (a number with
// every digit, or the text), unit, min, max, equals, regex, outcome
// (passed or failed) and started_ms. Text is written as the device gave
// it, with non-printable bytes escaped; a text cell that a spreadsheet
// would take for a formula (it starts with =, +, -, @, a tab or a
// carriage return) gets a leading single quote, while numbers, negative
// ones included, stay numbers (csvCell). It is written as the file is
// read, in bounded memory.
func WriteMeasurementsCSV(w io.Writer, events string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	if err := cw.Write(measureCSVHeader); err != nil {
		return fmt.Errorf("write measurements: %w", err)
	}
	var seq results.Sequence
	var werr error
	z := &results.Summarizer{
		OnStart: func(_ int, s *results.Sequence) { seq = *s },
		OnEvery: func(_ int, st *results.Step) {
			r, ok := results.MeasureRecordOf(st)
			if !ok || werr != nil {
				return
			}
			werr = cw.Write(measureRow(&seq, &r))
		},
	}
	if err := results.Summarize(events, z); err != nil {
		return fmt.Errorf("write measurements: %w", err)
	}
	cw.Flush()
	if werr == nil {
		werr = cw.Error()
	}
	if werr == nil {
		werr = bw.Flush()
	}
	if werr != nil {
		return fmt.Errorf("write measurements: %w", werr)
	}
	return nil
}

func measureRow(seq *results.Sequence, r *results.MeasureRecord) []string {
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'g', -1, 64)
	}
	it := ""
	if r.Iteration != nil {
		it = strconv.Itoa(*r.Iteration)
	}
	row := []string{cleanLine(seq.Name), cleanLine(seq.File), cleanLine(r.Step), cleanLine(r.StepName), it, cleanLine(r.Name),
		csvScalar(r.Value), cleanLine(r.Unit), num(r.Min), num(r.Max), csvScalar(r.Equals), cleanLine(r.Regex),
		string(r.Outcome), strconv.FormatFloat(float64(r.StartedMS), 'f', 3, 64)}
	for i := range row {
		row[i] = csvCell(row[i])
	}
	return row
}

// csvScalar writes a value: a number with every digit, text as it is
// (escaped), nothing for none.
func csvScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return cleanLine(x)
	}
	if f, ok := results.MeasuredNumber(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return runner.FormatMeasured(v)
}

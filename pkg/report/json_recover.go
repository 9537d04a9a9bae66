package report

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
)

// writeJSONBenches writes, after the sequences, the climbs of the benches'
// recovery ladders and the benches marked bad: "recoveries" and
// "bad_benches", each left out when empty. Their text is the device's and
// the user's: cleaned as every report cleans it.
func writeJSONBenches(jw *jsonWriter, b *results.Benches) {
	if len(b.Recoveries) > 0 {
		list := make([]results.Recovery, len(b.Recoveries))
		for i, r := range b.Recoveries {
			list[i] = cleanRecovery(r)
		}
		jw.printf(",\n  \"recoveries\": %s", jw.marshal(list, "  "))
	}
	if len(b.Bad) > 0 {
		list := make([]results.BadBench, len(b.Bad))
		for i, x := range b.Bad {
			x.Bench, x.Reason = cleanLine(x.Bench), cleanLine(x.Reason)
			list[i] = x
		}
		jw.printf(",\n  \"bad_benches\": %s", jw.marshal(list, "  "))
	}
}

// cleanRecovery is r with its text escaped for a report (cleanLine).
func cleanRecovery(r results.Recovery) results.Recovery {
	r.Bench, r.Sequence = cleanLine(r.Bench), cleanLine(r.Sequence)
	if r.Check != nil {
		c := *r.Check
		c.Message = cleanLine(c.Message)
		r.Check = &c
	}
	rungs := make([]results.RungResult, len(r.Rungs))
	for i, g := range r.Rungs {
		g.Label, g.File = cleanLine(g.Label), cleanLine(g.File)
		g.Message, g.Health.Message = cleanLine(g.Message), cleanLine(g.Health.Message)
		rungs[i] = g
	}
	r.Rungs = rungs
	return r
}

// readJSONBenches reads the "recoveries" and "bad_benches" of the JSON
// report at path into b, one sequence of the report in memory at a time.
// scanShardJSON has checked the report already.
func readJSONBenches(fs files.Policy, path string, b *results.Benches) error {
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	d := json.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	if _, err := d.Token(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		switch key, _ := tok.(string); key {
		case "recoveries":
			var list []results.Recovery
			err = d.Decode(&list)
			b.Recoveries = append(b.Recoveries, list...)
		case "bad_benches":
			var list []results.BadBench
			err = d.Decode(&list)
			b.Bad = append(b.Bad, list...)
		default:
			err = skipJSON(d)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	return nil
}

// skipJSON reads past the next value of d, a token at a time, so that a
// report's sequences never stand in memory whole.
func skipJSON(d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a number, text, true, false or null
	}
	for d.More() {
		if delim == '{' {
			if _, err := d.Token(); err != nil { // the key
				return err
			}
		}
		if err := skipJSON(d); err != nil {
			return err
		}
	}
	_, err = d.Token()
	return err
}

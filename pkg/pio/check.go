// Static analysis (pio check) and its defects.

package pio

import (
	"context"
	"encoding/json"
	"strconv"
)

// Defect is one finding of `pio check`.
type Defect struct {
	// Severity is high, medium or low.
	Severity string `json:"severity"`
	Category string `json:"category"`
	Message  string `json:"message"`
	// File is absolute, as PlatformIO gives it; Line and Column are 1-based,
	// 0 when the tool gave none.
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// ID is the check tool's name for the rule (cppcheck's
	// unusedVariable); CWE its CWE number, 0 for none.
	ID  string `json:"id"`
	CWE int    `json:"cwe"`
}

// CheckRun is one tool run on one environment.
type CheckRun struct {
	Env       string   `json:"env"`
	Tool      string   `json:"tool"`
	DurationS float64  `json:"duration"`
	Succeeded bool     `json:"succeeded"`
	Defects   []Defect `json:"defects"`
	High      int      `json:"high"`
	Medium    int      `json:"medium"`
	Low       int      `json:"low"`
}

type rawDefect struct {
	Severity string          `json:"severity"`
	Category string          `json:"category"`
	Message  string          `json:"message"`
	File     string          `json:"file"`
	Line     int             `json:"line"`
	Column   int             `json:"column"`
	ID       *string         `json:"id"`
	CWE      json.RawMessage `json:"cwe"`
}

// CheckProjectDefects runs `pio check -d dir [-e env] --json-output`. A
// check that found defects is a result, not an error: the error is for a
// check that could not run.
func (c *Client) CheckProjectDefects(ctx context.Context, dir, env string) ([]CheckRun, *Output, error) {
	if err := CheckProject(dir, env); err != nil {
		return nil, nil, err
	}
	args := append(append([]string{"check"}, projectArgs(dir, env)...), "--json-output")
	out, err := c.run(ctx, "", args)
	if err != nil {
		return nil, nil, err
	}
	var raw []struct {
		Env       string      `json:"env"`
		Tool      string      `json:"tool"`
		Duration  float64     `json:"duration"`
		Succeeded bool        `json:"succeeded"`
		Defects   []rawDefect `json:"defects"`
	}
	if err := decodeJSON("pio check", []byte(out.Text), &raw); err != nil {
		if !out.OK() {
			return nil, out, failed(out)
		}
		return nil, out, err
	}
	runs := make([]CheckRun, 0, len(raw))
	for _, r := range raw {
		run := CheckRun{Env: r.Env, Tool: r.Tool, DurationS: r.Duration, Succeeded: r.Succeeded, Defects: []Defect{}}
		for _, d := range r.Defects {
			def := Defect{Severity: d.Severity, Category: d.Category, Message: d.Message, File: d.File, Line: d.Line, Column: d.Column}
			if d.ID != nil {
				def.ID = *d.ID
			}
			// cppcheck gives the CWE as a number, some tools as text.
			var n json.Number
			if json.Unmarshal(d.CWE, &n) == nil {
				v, _ := n.Int64()
				def.CWE = int(v)
			} else {
				var s string
				if json.Unmarshal(d.CWE, &s) == nil {
					def.CWE, _ = strconv.Atoi(s)
				}
			}
			switch d.Severity {
			case "high":
				run.High++
			case "medium":
				run.Medium++
			default:
				run.Low++
			}
			run.Defects = append(run.Defects, def)
		}
		runs = append(runs, run)
	}
	return runs, out, nil
}

package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/runner"
)

// testCaseOut is one test case of a pio_test step.
type testCaseOut struct {
	Suite string `json:"suite"`
	Env   string `json:"env"`
	Name  string `json:"name"`
	// Status is PASSED, FAILED, SKIPPED, WARNED or ERRORED.
	Status     string  `json:"status"`
	Message    string  `json:"message,omitempty"`
	File       string  `json:"file,omitempty"`
	Line       int     `json:"line,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

type diagnosticOut struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// buildResult is what a build or upload did, as the tools and task_status
// return it: build.Result's fields, sizes flattened.
type buildResult struct {
	TaskID string `json:"task_id"`
	Kind   string `json:"kind"`
	// State is running (background, just started), done, failed or
	// cancelled.
	State      string         `json:"state"`
	OK         bool           `json:"ok"`
	Class      string         `json:"class,omitempty"`
	Summary    string         `json:"summary"`
	Diagnostic *diagnosticOut `json:"diagnostic,omitempty"`
	Tail       string         `json:"tail,omitempty"`
	DurationMS float64        `json:"duration_ms"`
	ExitCode   *int64         `json:"exit_code,omitempty"`
	Command    []string       `json:"command,omitempty"`

	Text         *int64   `json:"text,omitempty"`
	Data         *int64   `json:"data,omitempty"`
	BSS          *int64   `json:"bss,omitempty"`
	FlashBytes   *int64   `json:"flash_bytes,omitempty"`
	RAMBytes     *int64   `json:"ram_bytes,omitempty"`
	FlashTotal   *int64   `json:"flash_total,omitempty"`
	FlashPercent *float64 `json:"flash_percent,omitempty"`
	RAMTotal     *int64   `json:"ram_total,omitempty"`
	RAMPercent   *float64 `json:"ram_percent,omitempty"`
	ELF          string   `json:"elf,omitempty"`

	// File, Method and Output describe an image written through OpenOCD.
	File   string `json:"file,omitempty"`
	Method string `json:"method,omitempty"`
	Output string `json:"output,omitempty"`

	// Tests holds the test cases a pio_test step ran, each with its
	// status; TestCases, Failures, Errors and Skipped count them.
	Tests     []testCaseOut `json:"tests,omitempty"`
	TestCases *int64        `json:"test_cases,omitempty"`
	Failures  *int64        `json:"failures,omitempty"`
	Errors    *int64        `json:"errors,omitempty"`
	Skipped   *int64        `json:"skipped,omitempty"`

	LogResource    string `json:"log_resource"`
	RunID          string `json:"run_id,omitempty"`
	ReportResource string `json:"report_resource,omitempty"`
}

// resultFrom reads a build or upload step's result.
func resultFrom(t *task, st runner.StepResult) *buildResult {
	d := st.Data
	r := &buildResult{TaskID: t.id, Kind: t.kind, OK: st.Status == runner.Passed, Summary: st.Message,
		DurationMS: ms(st.Duration), LogResource: taskLogURI(t.id)}
	str := func(k string) string { v, _ := d[k].(string); return v }
	r.Class = str("class")
	if r.Summary == "" {
		r.Summary = str("summary")
	}
	if !r.OK && r.Class == "" && strings.Contains(r.Summary, "timed out") {
		r.Class = "Timeout"
	}
	r.Tail, r.ELF = str("tail"), str("elf")
	r.File, r.Method, r.Output = str("file"), str("method"), str("output")
	if v, ok := number(d["duration_ms"]); ok {
		r.DurationMS = v
	}
	if cases, ok := d["cases"].([]any); ok {
		for _, x := range cases {
			m, _ := x.(map[string]any)
			str := func(k string) string { v, _ := m[k].(string); return v }
			line, _ := number(m["line"])
			ms, _ := number(m["duration_ms"])
			r.Tests = append(r.Tests, testCaseOut{Suite: str("suite"), Env: str("env"), Name: str("name"), Status: str("status"),
				Message: str("message"), File: str("file"), Line: int(line), DurationMS: ms})
		}
	}
	ints := map[string]**int64{"exit_code": &r.ExitCode, "test_cases": &r.TestCases, "failures": &r.Failures, "errors": &r.Errors, "skipped": &r.Skipped, "text": &r.Text, "data": &r.Data, "bss": &r.BSS,
		"flash_bytes": &r.FlashBytes, "ram_bytes": &r.RAMBytes, "flash_total": &r.FlashTotal, "ram_total": &r.RAMTotal}
	for k, p := range ints {
		if v, ok := number(d[k]); ok {
			n := int64(v)
			*p = &n
		}
	}
	for k, p := range map[string]**float64{"flash_percent": &r.FlashPercent, "ram_percent": &r.RAMPercent} {
		if v, ok := number(d[k]); ok {
			*p = &v
		}
	}
	if cmd, ok := d["command"].([]any); ok {
		for _, c := range cmd {
			r.Command = append(r.Command, fmt.Sprint(c))
		}
	}
	if dg, ok := d["diagnostic"].(map[string]any); ok {
		m, _ := dg["message"].(string)
		f, _ := dg["file"].(string)
		line, _ := number(dg["line"])
		col, _ := number(dg["column"])
		if m != "" || f != "" {
			r.Diagnostic = &diagnosticOut{File: f, Line: int(line), Column: int(col), Message: m}
		}
	}
	return r
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// formatBuild is the one-line outcome of a build or upload:
// "build ok: flash 564 bytes, ram 2096 bytes in 0.104s", or
// "build failed: MissingHeader broken/missing_header.c:6:10: ...".
func formatBuild(r *buildResult) string {
	var b strings.Builder
	dur := fmtDur(durationMS(r.DurationMS))
	if r.OK {
		fmt.Fprintf(&b, "%s ok: %s in %s", r.Kind, first(r.Summary, "done"), dur)
	} else {
		fmt.Fprintf(&b, "%s failed:", r.Kind)
		if r.Class != "" {
			b.WriteString(" " + r.Class)
		}
		if d := r.Diagnostic; d != nil && d.File != "" {
			fmt.Fprintf(&b, " %s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
		} else {
			b.WriteString(" " + r.Summary)
		}
		fmt.Fprintf(&b, " (after %s)", dur)
	}
	for _, c := range r.Tests {
		fmt.Fprintf(&b, "\n  %s:%s/%s %s", c.Env, c.Suite, c.Name, c.Status)
		if c.Message != "" {
			fmt.Fprintf(&b, ": %s (%s:%d)", c.Message, c.File, c.Line)
		}
	}
	b.WriteString("\nlog: " + r.LogResource)
	return b.String()
}

package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/sim"
)

// seedSteps is a step list in the exact form the serial_sequence tools of
// existing MCP debug servers take.
func seedSteps(conn string) []any {
	return []any{
		map[string]any{"send": "version", "to": conn, "expect": "hilrun-sim", "read_timeout": 20.0, "line_ending": "lf"},
		map[string]any{"delay_ms": 50},
		map[string]any{"mem_write": true, "address": "0x48000018", "value": "0x20", "probe": "yellow", "width": 32},
		map[string]any{"mem_read": true, "address": "0x48000014", "count": 2, "probe": "yellow", "width": 32, "label": "gpio_pre"},
		map[string]any{"send": "status", "to": conn, "expect": "led: on", "read_timeout": 20.0},
	}
}

func TestSerialSequenceSeedForms(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	raw, _ := json.Marshal(seedSteps(conn))
	for _, tc := range []struct {
		name  string
		steps any
	}{
		{"array", seedSteps(conn)},
		{"json string", string(raw)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := e.sequence(map[string]any{"steps": tc.steps})
			if !out.Passed || out.Status != "passed" {
				t.Fatalf("status %s: %s", out.Status, statuses(out))
			}
			if len(out.Steps) != 5 || out.Counts.Passed != 5 {
				t.Fatalf("steps: %s", statuses(out))
			}
			mr := out.Steps[3]
			if mr.Kind != "mem_read" || !strings.Contains(mr.Message, "gpio_pre: 0x00000020") {
				t.Errorf("mem_read step: %+v", mr)
			}
			if d := out.Steps[1].DurationMS; d < 49 {
				t.Errorf("delay_ms 50 took %.3f ms", d)
			}
			if out.ReportResource == "" || len(out.LogResources) != 1 {
				t.Errorf("resources: %q %q", out.ReportResource, out.LogResources)
			}
		})
	}
	// The text report: one line per step and a summary line.
	res := e.call("serial_sequence", map[string]any{"steps": seedSteps(conn)})
	txt := text(res)
	if !strings.Contains(txt, "passed 5/5 in ") || strings.Count(txt, "\n") < 6 {
		t.Errorf("text report:\n%s", txt)
	}
	// The connection stays open and usable after the sequence.
	var st statusResult
	decode(t, e.call("serial_status", map[string]any{}), &st)
	if len(st.Connections) != 1 || !st.Connections[0].Connected {
		t.Errorf("status after the sequence: %+v", st)
	}
}

func TestSerialSequenceTargets(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	t.Run("no connection: the virtual board", func(t *testing.T) {
		out := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun-sim"}}})
		if !out.Passed {
			t.Fatal(statuses(out))
		}
	})
	t.Run("a port path is opened for the sequence", func(t *testing.T) {
		out := e.sequence(map[string]any{"steps": []any{
			map[string]any{"send": "echo hi", "to": e.board.SerialPath(), "expect": "hi"},
		}})
		if !out.Passed {
			t.Fatal(statuses(out), out.Error)
		}
	})
	t.Run("label", func(t *testing.T) {
		id := e.open(map[string]any{"label": "dut", "line_ending": "crlf"})
		defer e.call("serial_close", map[string]any{"connection": id})
		out := e.sequence(map[string]any{"steps": []any{
			map[string]any{"send": "echo labelled", "to": "dut", "expect": "labelled"},
			map[string]any{"send": "echo omitted", "expect": "omitted"},
		}})
		if !out.Passed {
			t.Fatal(statuses(out), out.Error)
		}
	})
	t.Run("vars and devices", func(t *testing.T) {
		out := e.sequence(map[string]any{
			"devices": map[string]any{"board": map[string]any{"port": e.board.SerialPath(), "baud": 115200}},
			"vars":    map[string]any{"word": "zebra", "n": 3},
			"steps": []any{
				map[string]any{"send": "echo ${word}", "to": "board", "expect": "zebra"},
				map[string]any{"assert": "n == 3"},
			},
		})
		if !out.Passed {
			t.Fatal(statuses(out), out.Error)
		}
	})
	t.Run("invalid steps name the step", func(t *testing.T) {
		msg := e.callErr("serial_sequence", map[string]any{"steps": []any{
			map[string]any{"send": "version"},
			map[string]any{"send": "x", "expct": "y"},
		}})
		if !strings.Contains(msg, `serial_sequence: /steps/1/expct: unknown key "expct"`) || !strings.Contains(msg, "expect") {
			t.Errorf("error: %s", msg)
		}
		msg = e.callErr("serial_sequence", map[string]any{"steps": "[{"})
		if !strings.Contains(msg, "steps") {
			t.Errorf("error: %s", msg)
		}
		msg = e.callErr("serial_sequence", map[string]any{"steps": []any{}, "bogus": 1})
		if !strings.Contains(msg, `unknown field "bogus"`) {
			t.Errorf("error: %s", msg)
		}
	})
}

func TestOnFailure(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	steps := []any{
		map[string]any{"send": "echo one", "expect": "one"},
		map[string]any{"send": "echo two", "expect": "never printed", "read_timeout": 0.2},
		map[string]any{"send": "echo three", "expect": "three"},
	}
	finally := []any{map[string]any{"send": "led off", "expect": "LED off"}}
	for _, tc := range []struct {
		onFailure string
		want      string
	}{
		{"", "0:passed 1:failed 2:passed finally.0:passed"},
		{"continue", "0:passed 1:failed 2:passed finally.0:passed"},
		{"stop", "0:passed 1:failed 2:skipped finally.0:passed"},
	} {
		t.Run(tc.onFailure, func(t *testing.T) {
			args := map[string]any{"steps": steps, "finally": finally}
			if tc.onFailure != "" {
				args["on_failure"] = tc.onFailure
			}
			out := e.sequence(args)
			if got := statuses(out); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if out.Passed || out.Status != "failed" {
				t.Errorf("status %s", out.Status)
			}
		})
	}
}

func TestFilterResponses(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	for _, tc := range []struct {
		name   string
		filter bool
		want   string
		// readTimeout is the first step's: long where it must pass, short
		// where nothing can match.
		readTimeout float64
	}{
		{"unfiltered: a log line matches", false, "0:passed 1:passed", 20},
		{"filtered: only > lines match", true, "0:failed 1:passed", 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := e.sequence(map[string]any{"filter_responses": tc.filter, "steps": []any{
				map[string]any{"send": "echo log OK", "expect": "OK", "read_timeout": tc.readTimeout},
				map[string]any{"send": "echo >OK", "expect": "OK", "read_timeout": 20},
			}})
			if got := statuses(out); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBusyAndLockTimeout(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	other := e.connect("second-client")

	// The sequence holds the port until the test lets it go: it polls a
	// word of the board's RAM the test writes.
	const gate = sim.RAMBase + 0x100
	done := make(chan sequenceResult)
	go func() {
		res := callWith(t, context.Background(), e.c, "serial_sequence", map[string]any{"steps": []any{
			map[string]any{"send": "echo start", "to": conn, "expect": "start", "read_timeout": 20},
			map[string]any{"mem_poll": gate, "until": "value == 1", "interval": "10ms", "timeout": "60s", "probe": "yellow"},
		}})
		var out sequenceResult
		decode(t, res, &out)
		done <- out
	}()
	waitFor(t, "the sequence to hold the port", func() bool {
		return e.srv.locks.holderOf(portKey(realPort(e.board.SerialPath()))) != ""
	})

	res := callWith(t, context.Background(), other, "serial_write", map[string]any{"connection": conn, "data": "echo x", "newline": true})
	if !res.IsError {
		t.Fatalf("write during a sequence succeeded: %s", text(res))
	}
	msg := text(res)
	for _, want := range []string{"busy: held by serial_sequence (request ", "client test-client", " since "} {
		if !strings.Contains(msg, want) {
			t.Errorf("busy error %q lacks %q", msg, want)
		}
	}
	var st statusResult
	decode(t, callWith(t, context.Background(), other, "serial_status", nil), &st)
	if !strings.Contains(st.Connections[0].HeldBy, "serial_sequence") {
		t.Errorf("status held_by: %q", st.Connections[0].HeldBy)
	}
	// A second sequence on the same port is refused too.
	res = callWith(t, context.Background(), other, "serial_sequence", map[string]any{"steps": []any{map[string]any{"send": "echo y", "to": conn}}})
	if !res.IsError || !strings.Contains(text(res), "busy: held by") {
		t.Errorf("second sequence: %s", text(res))
	}

	start := time.Now()
	time.AfterFunc(100*time.Millisecond, func() {
		if err := e.board.Memory().Write(gate, 32, 1); err != nil {
			t.Error(err)
		}
	})
	res = callWith(t, context.Background(), other, "serial_write", map[string]any{"connection": conn, "data": "echo waited", "newline": true, "lock_timeout_ms": 60000})
	if res.IsError {
		t.Fatalf("write with lock_timeout_ms: %s", text(res))
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("the write did not wait for the sequence")
	}
	out := <-done
	if !out.Passed {
		t.Errorf("sequence: %s", statuses(out))
	}
	var w writeResult
	decode(t, res, &w)
	e.call("serial_expect", map[string]any{"connection": conn, "pattern": "waited", "cursor": w.Cursor, "timeout_ms": 20000})
}

func TestCancellation(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The client cancels once the first step passed (its progress
	// notification says so), so while the delay runs.
	go func() {
		for ctx.Err() == nil {
			for _, n := range e.notifications("notifications/progress") {
				if msg, _ := n.Params.AdditionalFields["message"].(string); strings.HasPrefix(msg, "0 passed") {
					cancel()
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	req := request("serial_sequence", map[string]any{
		"steps": []any{
			map[string]any{"send": "echo begin", "expect": "begin", "read_timeout": 20},
			map[string]any{"delay_ms": 120000},
			map[string]any{"send": "echo never"},
		},
		"finally": []any{map[string]any{"send": "led off", "expect": "LED off", "read_timeout": 20}},
	})
	req.Params.Meta = &mcp.Meta{ProgressToken: "cancel-1"}
	start := time.Now()
	e.c.CallTool(ctx, req)
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("cancellation took %s", d)
	}
	// The run was recorded with partial results and its finally step.
	var r *runRecord
	waitFor(t, "the run to be recorded", func() bool { r = e.srv.runs.find("r1"); return r != nil })
	rep := readResource(t, e, runReportURI(r.id))
	var doc struct {
		Sequences []struct {
			Status string
			Steps  []struct{ Path, Status string }
		}
	}
	if err := json.Unmarshal([]byte(rep), &doc); err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, s := range doc.Sequences[0].Steps {
		got += s.Path + ":" + s.Status + " "
	}
	// The cancel comes once step 0 passed: while the delay runs (it ends
	// in an error), or on a busy machine before it began (it is skipped).
	if got != "0:passed 1:error 2:skipped finally.0:passed " && got != "0:passed 1:skipped 2:skipped finally.0:passed " {
		t.Errorf("steps after cancellation: %s", got)
	}
	// The port is free again.
	e.call("serial_write", map[string]any{"connection": conn, "data": "echo free", "newline": true})
}

func TestProgressNotifications(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	req := request("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"send": "echo a", "expect": "a", "read_timeout": 20},
		// Notifications come at most every 50ms: the delays keep them
		// apart, so that there are several, even on a loaded machine.
		map[string]any{"delay_ms": 300},
		map[string]any{"delay_ms": 300},
		map[string]any{"send": "echo b", "expect": "b", "read_timeout": 20},
	}})
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := e.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var ps []mcp.JSONRPCNotification
	// Notifications reach the client on their own path: wait for the
	// last one, not only for the call's result.
	waitFor(t, "progress", func() bool {
		ps = e.notifications("notifications/progress")
		return len(ps) >= 2 && num(ps[len(ps)-1].Params.AdditionalFields["progress"]) == 4
	})
	last := ps[len(ps)-1].Params.AdditionalFields
	if last["progressToken"] != "tok-1" || num(last["progress"]) != 4 || num(last["total"]) != 4 {
		t.Errorf("last progress: %v", last)
	}
	if msg, _ := last["message"].(string); !strings.Contains(msg, "passed send echo b") {
		t.Errorf("message %q", last["message"])
	}
	prev := 0.0
	for _, p := range ps {
		v := num(p.Params.AdditionalFields["progress"])
		if v <= prev {
			t.Errorf("progress not increasing: %v", ps)
		}
		prev = v
	}
}

// num reads a JSON number that may not have gone through JSON.
func num(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return -1
}

func TestValidateSequence(t *testing.T) {
	e := newEnv(t, envOptions{})
	var out validateResult
	decode(t, e.call("validate_sequence", map[string]any{"content": "steps:\n  - send: hi\n    expct: x\n  - delay: 100\n"}), &out)
	if out.Valid || len(out.Errors) != 2 {
		t.Fatalf("%+v", out)
	}
	if e0 := out.Errors[0]; e0.Line != 3 || e0.Column != 5 || !strings.Contains(e0.Message, `unknown key "expct"`) {
		t.Errorf("first error: %+v", e0)
	}
	if e1 := out.Errors[1]; e1.Line != 4 || e1.Column != 12 {
		t.Errorf("second error: %+v", e1)
	}
	decode(t, e.call("validate_sequence", map[string]any{"content": `[{"send": "status", "expect": "OK"}, {"delay_ms": 500}]`, "format": "json"}), &out)
	if !out.Valid || out.Steps != 2 || len(out.Errors) != 0 {
		t.Errorf("%+v", out)
	}
	decode(t, e.call("validate_sequence", map[string]any{"content": "[{\"send\": 1,\n \"expect\": }]", "format": "json"}), &out)
	if out.Valid || out.Errors[0].Line != 2 {
		t.Errorf("%+v", out)
	}
	// Steps are counted as written, as validate and run --list count
	// them: a group and a repeat are not steps, their executions apart.
	res := e.call("validate_sequence", map[string]any{"content": "name: c\nsteps:\n  - group: g\n    steps:\n      - send: a\n  - repeat: 3\n    steps:\n      - delay: 1ms\n"})
	decode(t, res, &out)
	if !out.Valid || out.Steps != 2 || !strings.Contains(text(res), "valid: c, 2 steps, up to 4 executions") {
		t.Errorf("%+v\n%s", out, text(res))
	}
}

func readResource(t *testing.T, e *env, uri string) string {
	t.Helper()
	var req mcp.ReadResourceRequest
	req.Params.URI = uri
	res, err := e.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	switch c := res.Contents[0].(type) {
	case mcp.TextResourceContents:
		return c.Text
	case mcp.BlobResourceContents:
		return "blob:" + c.Blob
	}
	t.Fatalf("contents %T", res.Contents[0])
	return ""
}

// TestHTMLResource reads a run's HTML report as a resource: the page
// hilrun run --html writes, with the run's console in it.
func TestHTMLResource(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	out := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "echo html-check", "expect": "html-check"}}})
	var req mcp.ReadResourceRequest
	req.Params.URI = runHTMLURI(out.RunID)
	res, err := e.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatalf("read %s: %v", req.Params.URI, err)
	}
	page, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok || page.MIMEType != "text/html" {
		t.Fatalf("contents %#v, want text/html", res.Contents[0])
	}
	for _, want := range []string{"<!DOCTYPE html>", `id="hilrun-data"`, "<title>PASSED "} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("the HTML report lacks %q: %.300s", want, page.Text)
		}
	}
	list, err := e.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.Resources {
		found = found || (r.URI == req.Params.URI && r.MIMEType == "text/html")
	}
	if !found {
		t.Errorf("resources/list lacks %s", req.Params.URI)
	}
}

func TestResources(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.MaxRuns = 2 }})
	out := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "echo resource-check", "expect": "resource-check"}}})
	if rep := readResource(t, e, out.ReportResource); !strings.Contains(rep, `"passed": true`) {
		t.Errorf("report: %s", rep)
	}
	if log := readResource(t, e, out.LogResources[0]); !strings.Contains(log, "resource-check\r\nsim> ") {
		t.Errorf("console log: %q", log)
	}
	// resources/list and the templates.
	list, err := e.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]bool{}
	for _, r := range list.Resources {
		uris[r.URI] = true
	}
	if !uris[out.ReportResource] || !uris[out.LogResources[0]] {
		t.Errorf("resources/list: %v", uris)
	}
	tl, err := e.c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tl.ResourceTemplates) != 7 {
		t.Errorf("templates: %v %v", tl, err)
	}
	// A connection's log outlives it.
	id := e.open(nil)
	e.call("serial_write", map[string]any{"connection": id, "data": "echo conn-log", "newline": true})
	e.call("serial_expect", map[string]any{"connection": id, "pattern": "conn-log\r\n", "cursor": 0})
	e.call("serial_close", map[string]any{"connection": id})
	if log := readResource(t, e, connLogURI(id)); !strings.Contains(log, "conn-log") {
		t.Errorf("connection log: %q", log)
	}
	// Only the last MaxRuns runs are kept.
	e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}})
	e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}})
	var req mcp.ReadResourceRequest
	req.Params.URI = out.ReportResource
	if _, err := e.c.ReadResource(context.Background(), req); err == nil {
		t.Errorf("run %s is still readable after 2 newer runs", out.RunID)
	}
}

// TestResultBounded runs more top-level steps than a result lists, and a
// repeat: the result names its limit, keeps the first and last steps and
// every failure, summarises the repeat by its statistics, and the report
// resource keeps every step.
func TestResultBounded(t *testing.T) {
	e := newEnv(t, envOptions{})
	n := maxResultSteps + 300
	var list []any
	for i := 0; i < n; i++ {
		if i == 700 {
			list = append(list, map[string]any{"assert": "1 == 2", "name": "the failure"})
			continue
		}
		list = append(list, map[string]any{"set": map[string]any{"x": i}})
	}
	list = append(list, map[string]any{"repeat": map[string]any{"count": 3000, "as": "i"},
		"steps": []any{map[string]any{"assert": "i != 1234"}}})
	out := e.sequence(map[string]any{"steps": list, "on_failure": "continue"})
	if out.StepLimit != maxResultSteps || out.StepBytesLimit != maxResultBytes {
		t.Errorf("limits %d %d", out.StepLimit, out.StepBytesLimit)
	}
	if len(out.Steps) != maxResultSteps+1 || out.StepsLeftOut != n+1-len(out.Steps) {
		t.Fatalf("%d steps listed, %d left out, of %d", len(out.Steps), out.StepsLeftOut, n+1)
	}
	first, last := out.Steps[0], out.Steps[len(out.Steps)-1]
	if first.Path != "0" || last.Kind != "repeat" {
		t.Errorf("first %s, last %s %s", first.Path, last.Path, last.Kind)
	}
	found := false
	for _, st := range out.Steps {
		found = found || (st.Path == "700" && st.Status == "failed")
	}
	if !found {
		t.Error("the failing step in the middle was left out")
	}
	r := last.Repeat
	if r == nil || r.Iterations != 3000 || r.Failed != 1 || len(r.Failures) != 1 || r.Failures[0].Index != 1234 {
		t.Fatalf("repeat summary %+v", r)
	}
	if out.Counts.Total != n+3000 || out.Counts.Failed != 2 {
		t.Errorf("counts %+v", out.Counts)
	}
	rep := readResource(t, e, out.ReportResource)
	if c := strings.Count(rep, `"kind": "set"`); c != n-1 {
		t.Errorf("the report lists %d set steps, want %d", c, n-1)
	}
}

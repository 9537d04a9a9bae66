package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hilrun/hilrun/pkg/sim"
)

// serial_sequence runs parallel: branches as hilrun run does, here from
// the official Go SDK's client over stdio, against a virtual board with
// two consoles: branch a sends over the radio once both branches met at a
// barrier, branch b hears it; then a failing branch cancels the other,
// and the finally steps of both run.
func TestSerialSequenceParallel(t *testing.T) {
	board := sim.New(sim.Options{Consoles: 2})
	if err := board.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { board.Close() })
	e := newEnv(t, envOptions{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() { e.srv.ServeStdio(context.Background(), inR, outW); outW.Close(); close(served) }()
	// mcp-go keeps the stdio session in a global: the next test's server
	// may start only once this one has ended.
	t.Cleanup(func() { inW.Close(); <-served })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "parallel", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			var text []string
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					text = append(text, tc.Text)
				}
			}
			t.Fatalf("%s failed: %s", name, strings.Join(text, "\n"))
		}
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("decode %s: %v", data, err)
		}
	}
	var op openResult
	call("serial_open", map[string]any{"port": board.ConsolePath(0), "label": "a", "prompt": "sim> "}, &op)
	call("serial_open", map[string]any{"port": board.ConsolePath(1), "label": "b", "prompt": "sim> "}, &op)

	var res sequenceResult
	call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"parallel": map[string]any{
			"a": []any{
				map[string]any{"barrier": "ready", "timeout": "30s"},
				map[string]any{"send": "tx hello", "to": "a", "expect": "tx: 5 bytes"},
			},
			"b": []any{
				map[string]any{"barrier": "ready", "timeout": "30s"},
				map[string]any{"expect": "rx hello", "to": "b", "timeout": "30s"},
			},
		}},
	}}, &res)
	branch := map[string]string{}
	for _, st := range res.Steps {
		branch[st.Path] = st.Branch + " " + string(st.Status)
	}
	if !res.Passed || branch["0.a.1"] != "a passed" || branch["0.b.1"] != "b passed" || branch["0"] != " passed" {
		t.Fatalf("tx on a, rx on b: passed %v, steps %v: %s", res.Passed, branch, res.Result)
	}

	call("serial_sequence", map[string]any{"on_failure": "stop", "steps": []any{
		map[string]any{"parallel": map[string]any{
			"a": map[string]any{
				"steps":   []any{map[string]any{"assert": "1 == 2"}, map[string]any{"barrier": "go"}},
				"finally": []any{map[string]any{"send": "echo a-finally", "to": "a", "expect": "a-finally"}},
			},
			"b": map[string]any{
				"steps":   []any{map[string]any{"barrier": "go", "timeout": "60s"}, map[string]any{"send": "tx never", "to": "b"}},
				"finally": []any{map[string]any{"send": "echo b-finally", "to": "b", "expect": "b-finally"}},
			},
		}},
	}}, &res)
	status := map[string]string{}
	for _, st := range res.Steps {
		status[st.Path] = string(st.Status) + " " + st.Message
	}
	if res.Passed || !strings.HasPrefix(status["0.a.0"], "failed") || !strings.HasPrefix(status["0.b.0"], "skipped cancelled: branch a failed") ||
		!strings.HasPrefix(status["0.b.1"], "skipped") || !strings.HasPrefix(status["0.a.finally.0"], "passed") || !strings.HasPrefix(status["0.b.finally.0"], "passed") {
		t.Errorf("a failing branch: %v\n%s", status, res.Result)
	}
}

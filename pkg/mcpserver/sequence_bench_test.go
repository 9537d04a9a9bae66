package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/ocdtelnet"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// BenchmarkSerialSequence is one serial_sequence call of 200 send/expect
// exchanges with the virtual board over an open connection, through an
// in-process client, as bench/cmd/mcpbench makes them over stdio; it
// reports the time per step. For a profile:
//
//	go test -run '^$' -bench SerialSequence -cpuprofile cpu.out ./pkg/mcpserver
func BenchmarkSerialSequence(b *testing.B) {
	const n = 200
	board := sim.New(sim.Options{})
	if err := board.Start(); err != nil {
		b.Fatal(err)
	}
	defer board.Close()
	ctx := context.Background()
	stub, err := ocdtelnet.Serve(ctx, board.Memory(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stub.Close()
	srv, err := New(Config{Log: &testenv.Buffer{}, Version: "bench", DefaultPort: board.SerialPath(), DefaultOpenOCD: stub.Addr(), DefaultBoard: sim.BannerTitle, MaxRuns: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := client.NewInProcessClient(srv.MCP())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	call := func(name string, args map[string]any) map[string]any {
		res, err := c.CallTool(ctx, request(name, args))
		if err != nil {
			b.Fatal(err)
		}
		var out map[string]any
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &out)
		if res.IsError {
			b.Fatalf("%s: %s", name, text(res))
		}
		return out
	}
	conn := call("serial_open", map[string]any{"port": board.SerialPath()})["connection_id"].(string)
	call("serial_expect", map[string]any{"connection": conn, "pattern": "sim> ", "cursor": 0, "timeout_ms": 20000})
	seq := 0
	steps := func() []any {
		list := make([]any, n)
		for i := range list {
			seq++
			word := fmt.Sprintf("ping-%d", seq)
			list[i] = map[string]any{"send": "echo " + word, "expect": word + "\r\nsim> ", "to": conn}
		}
		return list
	}
	call("serial_sequence", map[string]any{"steps": steps()})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		list := steps()
		b.StartTimer()
		if out := call("serial_sequence", map[string]any{"steps": list, "on_failure": "stop"}); out["passed"] != true {
			b.Fatalf("the sequence did not pass: %v", out)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/step")
}

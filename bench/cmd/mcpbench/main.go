// Command mcpbench measures what running a step list inside hilrun's MCP
// server saves an agent: N send/expect exchanges with the virtual board as
// one serial_sequence call, against the same exchanges as 2N separate
// serial_write and serial_expect calls, through the same MCP client over
// standard input and output, in one run with the two modes alternating.
//
//	go build -o /tmp/hilrun ./cmd/hilrun && go run ./bench/cmd/mcpbench -hilrun /tmp/hilrun
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	hilrun := flag.String("hilrun", "hilrun", "the hilrun binary to serve MCP (hilrun mcp --sim)")
	n := flag.Int("n", 200, "exchanges per measured round")
	rounds := flag.Int("rounds", 10, "rounds per mode, alternating")
	flag.Parse()
	if err := run(*hilrun, *n, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	c    *client.Client
	conn string
	seq  int
}

func run(hilrun string, n, rounds int) error {
	c, err := client.NewStdioMCPClient(hilrun, nil, "mcp", "--sim")
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpbench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	b := &bench{c: c}
	ports, err := b.call(ctx, "list_ports", map[string]any{})
	if err != nil {
		return err
	}
	var lp struct {
		Ports []struct {
			Path  string `json:"path"`
			Board string `json:"board"`
		} `json:"ports"`
	}
	if err := json.Unmarshal(ports, &lp); err != nil || len(lp.Ports) == 0 {
		return fmt.Errorf("list_ports found no virtual board: %s", ports)
	}
	path := lp.Ports[0].Path
	for _, p := range lp.Ports {
		if p.Board != "" {
			path = p.Path
		}
	}
	opened, err := b.call(ctx, "serial_open", map[string]any{"port": path, "baud": 115200})
	if err != nil {
		return err
	}
	var op struct {
		ID string `json:"connection_id"`
	}
	json.Unmarshal(opened, &op)
	b.conn = op.ID

	// Warm up both paths.
	if _, err := b.sequence(ctx, 10); err != nil {
		return err
	}
	if _, err := b.primitives(ctx, 10); err != nil {
		return err
	}
	var seqPer, primPer []time.Duration
	var seqTotal, primTotal []time.Duration
	for r := 0; r < rounds; r++ {
		modes := []func() error{
			func() error {
				d, err := b.sequence(ctx, n)
				seqTotal = append(seqTotal, d)
				seqPer = append(seqPer, d/time.Duration(n))
				return err
			},
			func() error {
				per, err := b.primitives(ctx, n)
				var total time.Duration
				for _, p := range per {
					total += p
				}
				primTotal = append(primTotal, total)
				primPer = append(primPer, per...)
				return err
			},
		}
		if r%2 == 1 {
			slices.Reverse(modes)
		}
		for _, m := range modes {
			if err := m(); err != nil {
				return err
			}
		}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }
	fmt.Printf("| mode | calls per round | round median | round max (of %d) | per exchange, median |\n|---|--:|--:|--:|--:|\n", rounds)
	fmt.Printf("| one `serial_sequence` of %d steps | 1 | %s | %s | %s |\n", n, ms(pct(seqTotal, 50)), ms(pct(seqTotal, 100)), us(pct(seqPer, 50)))
	fmt.Printf("| `serial_write` + `serial_expect` | %d | %s | %s | %s (p99 %s) |\n", 2*n, ms(pct(primTotal, 50)), ms(pct(primTotal, 100)), us(pct(primPer, 50)), us(pct(primPer, 99)))
	fmt.Printf("\nratio of round medians, primitives / serial_sequence: %.1fx\n", float64(pct(primTotal, 50))/float64(pct(seqTotal, 50)))
	return nil
}

// pct is the nearest-rank percentile p of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func (b *bench) call(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := b.c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		return nil, fmt.Errorf("%s: %s", tool, data)
	}
	return data, nil
}

// sequence runs n exchanges as one serial_sequence call and returns its
// wall time.
func (b *bench) sequence(ctx context.Context, n int) (time.Duration, error) {
	stepsList := make([]map[string]any, n)
	for i := range stepsList {
		b.seq++
		word := fmt.Sprintf("ping-%d", b.seq)
		stepsList[i] = map[string]any{"send": "echo " + word, "expect": word + "\r\nsim> ", "to": b.conn}
	}
	began := time.Now()
	out, err := b.call(ctx, "serial_sequence", map[string]any{"steps": stepsList, "on_failure": "stop"})
	d := time.Since(began)
	if err != nil {
		return d, err
	}
	var r struct {
		Passed bool `json:"passed"`
	}
	if json.Unmarshal(out, &r) != nil || !r.Passed {
		return d, errors.New("serial_sequence did not pass: " + string(out))
	}
	return d, nil
}

// primitives runs n exchanges as serial_write + serial_expect calls and
// returns the wall time of each exchange.
func (b *bench) primitives(ctx context.Context, n int) ([]time.Duration, error) {
	per := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		b.seq++
		word := fmt.Sprintf("ping-%d", b.seq)
		began := time.Now()
		w, err := b.call(ctx, "serial_write", map[string]any{"connection": b.conn, "data": "echo " + word, "newline": true})
		if err != nil {
			return per, err
		}
		var wr struct {
			Cursor int64 `json:"cursor"`
		}
		json.Unmarshal(w, &wr)
		e, err := b.call(ctx, "serial_expect", map[string]any{"connection": b.conn, "pattern": word + "\r\nsim> ", "cursor": wr.Cursor, "timeout_ms": 5000})
		if err != nil {
			return per, err
		}
		var er struct {
			Matched bool `json:"matched"`
		}
		if json.Unmarshal(e, &er) != nil || !er.Matched {
			return per, errors.New("serial_expect did not match: " + string(e))
		}
		per = append(per, time.Since(began))
	}
	return per, nil
}

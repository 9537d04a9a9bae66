// Command mcpbench measures what running a step list inside hilrun's MCP
// server saves an agent: N send/expect exchanges with the virtual board as
// one serial_sequence call, against the same exchanges as 2N separate
// serial_write and serial_expect calls, through the same MCP client over
// standard input and output, in one run with the two modes alternating.
//
// It also sets the cost of a step inside serial_sequence beside the cost of
// the same step in hilrun run: per round, each side runs the N steps and
// one step (serial_sequence over the open connection; hilrun run --sim of a
// file of those steps, as a process), and a step's cost is the round's
// time of N steps less the median time of one step, over N-1, so what
// every call or process pays once (the JSON-RPC round trip, starting the
// process and the board) cancels out. Rounds alternate the order of the
// sides; the ratio is taken per round. A call's time ends when the client
// has decoded the result, as an agent's client does.
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
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	var o options
	flag.StringVar(&o.hilrun, "hilrun", "hilrun", "the hilrun binary to serve MCP (hilrun mcp --sim)")
	flag.IntVar(&o.n, "n", 200, "exchanges per measured round")
	flag.IntVar(&o.rounds, "rounds", 10, "rounds per mode, alternating")
	flag.BoolVar(&o.primitives, "primitives", true, "measure the 2N serial_write and serial_expect calls")
	flag.BoolVar(&o.perStep, "per-step", true, "measure a step in serial_sequence against the same step in hilrun run")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

// options are mcpbench's flags.
type options struct {
	// hilrun is the binary that serves MCP and runs the files.
	hilrun string
	// n exchanges per round, rounds rounds.
	n, rounds int
	// primitives measures the serial_write and serial_expect calls,
	// perStep a step against the same step in hilrun run.
	primitives, perStep bool
}

// bench is an MCP session of hilrun mcp --sim with one connection open to
// the virtual board, and the number of the last exchange sent.
type bench struct {
	c    *client.Client
	conn string
	seq  int
}

func run(o options) error {
	c, err := client.NewStdioMCPClient(o.hilrun, nil, "mcp", "--sim")
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	b := &bench{c: c}
	if err := b.open(ctx); err != nil {
		return err
	}
	// Warm up both paths.
	if _, err := b.sequence(ctx, 10); err != nil {
		return err
	}
	if _, err := b.primitives(ctx, 10); err != nil {
		return err
	}
	// The server's CPU time, where /proc tells it.
	serverPID := childPID("mcp")
	var files runFiles
	if o.perStep {
		if files, err = writeRunFiles(o.n); err != nil {
			return err
		}
		defer os.RemoveAll(files.dir)
		// Warm up hilrun run too.
		if _, _, err := runFile(ctx, o.hilrun, files.one); err != nil {
			return err
		}
	}
	var t timings
	for r := 0; r < o.rounds; r++ {
		if err := b.round(ctx, o, r, files, serverPID, &t); err != nil {
			return err
		}
	}
	t.print(o, serverPID > 0)
	return nil
}

// open initializes the session and opens a connection to the virtual
// board's port, as list_ports finds it.
func (b *bench) open(ctx context.Context) error {
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpbench", Version: "1"}
	if _, err := b.c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
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
	return nil
}

// timings are what the rounds measured.
type timings struct {
	// seqPer and primPer are the times of each exchange, seqTotal and
	// primTotal of each round's exchanges, in serial_sequence and by
	// primitives.
	seqPer, primPer     []time.Duration
	seqTotal, primTotal []time.Duration
	// Per round, the times of the N steps and of one step on each side,
	// in wall time and in CPU time (user and system, of the server and of
	// the hilrun run process), which a busy machine disturbs less.
	seqNs, seq1s, runNs, run1s             []time.Duration
	cpuSeqNs, cpuSeq1s, cpuRunNs, cpuRun1s []time.Duration
}

// round runs round r of every mode that o asks for, in reverse order on
// odd rounds, and adds what it measured to t.
func (b *bench) round(ctx context.Context, o options, r int, files runFiles, serverPID int, t *timings) error {
	var seqN, seq1, runN, run1 time.Duration
	var cpuSeqN, cpuSeq1, cpuRunN, cpuRun1 time.Duration
	modes := []func() error{
		func() error {
			c := procCPU(serverPID)
			d, err := b.sequence(ctx, o.n)
			cpuSeqN = procCPU(serverPID) - c
			t.seqTotal = append(t.seqTotal, d)
			t.seqPer = append(t.seqPer, d/time.Duration(o.n))
			seqN = d
			return err
		},
	}
	if o.primitives {
		modes = append(modes, func() error {
			per, err := b.primitives(ctx, o.n)
			var total time.Duration
			for _, p := range per {
				total += p
			}
			t.primTotal = append(t.primTotal, total)
			t.primPer = append(t.primPer, per...)
			return err
		})
	}
	if o.perStep {
		modes = append(modes,
			func() (err error) {
				c := procCPU(serverPID)
				seq1, err = b.sequence(ctx, 1)
				cpuSeq1 = procCPU(serverPID) - c
				return err
			},
			func() (err error) { runN, cpuRunN, err = runFile(ctx, o.hilrun, files.n); return err },
			func() (err error) { run1, cpuRun1, err = runFile(ctx, o.hilrun, files.one); return err },
		)
	}
	if r%2 == 1 {
		slices.Reverse(modes)
	}
	for _, m := range modes {
		if err := m(); err != nil {
			return err
		}
	}
	if o.perStep {
		t.seqNs, t.seq1s, t.runNs, t.run1s = append(t.seqNs, seqN), append(t.seq1s, seq1), append(t.runNs, runN), append(t.run1s, run1)
		t.cpuSeqNs, t.cpuSeq1s = append(t.cpuSeqNs, cpuSeqN), append(t.cpuSeq1s, cpuSeq1)
		t.cpuRunNs, t.cpuRun1s = append(t.cpuRunNs, cpuRunN), append(t.cpuRun1s, cpuRun1)
	}
	return nil
}

// print prints the table of the exchanges and, with o.perStep, those of a
// step's cost in wall time and, with cpu, in CPU time.
func (t *timings) print(o options, cpu bool) {
	n := o.n
	mcpStep, runStep := perStepCost(t.seqNs, t.seq1s, n), perStepCost(t.runNs, t.run1s, n)
	ratios := ratioOf(mcpStep, runStep)
	mcpCPU, runCPU := perStepCost(t.cpuSeqNs, t.cpuSeq1s, n), perStepCost(t.cpuRunNs, t.cpuRun1s, n)
	cpuRatios := ratioOf(mcpCPU, runCPU)
	fmt.Printf("| mode | calls per round | round median | round max (of %d) | per exchange, median |\n|---|--:|--:|--:|--:|\n", o.rounds)
	fmt.Printf("| one `serial_sequence` of %d steps | 1 | %s | %s | %s |\n", n, ms(pct(t.seqTotal, 50)), ms(pct(t.seqTotal, 100)), us(pct(t.seqPer, 50)))
	if o.primitives {
		fmt.Printf("| `serial_write` + `serial_expect` | %d | %s | %s | %s (p99 %s) |\n", 2*n, ms(pct(t.primTotal, 50)), ms(pct(t.primTotal, 100)), us(pct(t.primPer, 50)), us(pct(t.primPer, 99)))
		fmt.Printf("\nratio of round medians, primitives / serial_sequence: %.1fx\n", float64(pct(t.primTotal, 50))/float64(pct(t.seqTotal, 50)))
	}
	if o.perStep {
		fmt.Printf("\nA step's cost, (time of %d steps - median time of 1 step) / %d, per round (%d rounds):\n\n", n, n-1, o.rounds)
		printStepCosts(mcpStep, runStep, ratios)
		if cpu {
			fmt.Printf("\nThe same in CPU time (user + system, of the hilrun mcp process and of the hilrun run process; clock ticks of 10 ms, so take it over many steps):\n\n")
			printStepCosts(mcpCPU, runCPU, cpuRatios)
		}
	}
}

// printStepCosts prints the table of a step's cost in serial_sequence
// (mcp) and in hilrun run (run), and their ratios per round.
func printStepCosts(mcp, run, ratios []time.Duration) {
	ratio := func(d time.Duration) string { return fmt.Sprintf("%.2fx", float64(d)/1000) }
	fmt.Printf("| side | median | p99 | max |\n|---|--:|--:|--:|\n")
	fmt.Printf("| `serial_sequence` (hilrun mcp --sim) | %s | %s | %s |\n", us(pct(mcp, 50)), us(pct(mcp, 99)), us(pct(mcp, 100)))
	fmt.Printf("| `hilrun run --sim` | %s | %s | %s |\n", us(pct(run, 50)), us(pct(run, 99)), us(pct(run, 100)))
	fmt.Printf("| ratio serial_sequence / hilrun run, per round | %s | %s | %s |\n", ratio(pct(ratios, 50)), ratio(pct(ratios, 99)), ratio(pct(ratios, 100)))
}

// perStepCost returns a step's cost in each round: (the round's time of n
// steps - the median time of one step over all rounds) / (n - 1). The
// one-step time is what a call or process pays once; its median keeps a
// round where starting a process was slow from making a step look free.
func perStepCost(nTimes, oneTimes []time.Duration, n int) []time.Duration {
	fixed := pct(oneTimes, 50)
	out := make([]time.Duration, len(nTimes))
	for i, d := range nTimes {
		out[i] = (d - fixed) / time.Duration(n-1)
	}
	return out
}

// ratioOf returns a[i]/b[i] in thousandths, kept as a Duration for pct;
// b[i] counts as at least a microsecond.
func ratioOf(a, b []time.Duration) []time.Duration {
	out := make([]time.Duration, len(a))
	for i := range a {
		out[i] = time.Duration(1000 * float64(a[i]) / float64(max(b[i], time.Microsecond)))
	}
	return out
}

// ms formats d in milliseconds, "1.2 ms".
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// us formats d in whole microseconds, "12 µs".
func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }

// runFiles are sequence files of the same exchanges for hilrun run.
type runFiles struct{ dir, n, one string }

// writeRunFiles writes a sequence of n exchanges and one of a single
// exchange, as bench.sequence sends them.
func writeRunFiles(n int) (runFiles, error) {
	dir, err := os.MkdirTemp("", "mcpbench-")
	if err != nil {
		return runFiles{}, err
	}
	f := runFiles{dir: dir, n: filepath.Join(dir, "n.yaml"), one: filepath.Join(dir, "one.yaml")}
	write := func(path string, count int) error {
		var b strings.Builder
		b.WriteString("name: mcpbench\non_failure: stop\nsteps:\n")
		for i := 1; i <= count; i++ {
			fmt.Fprintf(&b, "  - {send: \"echo ping-%d\", expect: \"ping-%d\\r\\nsim> \"}\n", i, i)
		}
		return os.WriteFile(path, []byte(b.String()), 0o644)
	}
	if err := errors.Join(write(f.n, n), write(f.one, 1)); err != nil {
		os.RemoveAll(dir)
		return runFiles{}, err
	}
	return f, nil
}

// runFile runs hilrun run --sim FILE and returns its wall time and CPU
// time; it must pass.
func runFile(ctx context.Context, hilrun, file string) (wall, cpu time.Duration, err error) {
	cmd := exec.CommandContext(ctx, hilrun, "run", "--sim", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	err = cmd.Run()
	wall = time.Since(began)
	if err != nil {
		return wall, 0, fmt.Errorf("hilrun run --sim %s: %v\n%s", file, err, stderr.String())
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// childPID is the process id of this process's child whose command line
// has the argument arg, or 0 (no /proc, or no such child).
func childPID(arg string) int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			cmdline, _ := os.ReadFile("/proc/" + f + "/cmdline")
			if slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
				pid, _ := strconv.Atoi(f)
				return pid
			}
		}
	}
	return 0
}

// procCPU is the user and system time process pid has used so far, from
// /proc/PID/stat; 0 when unknown.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	// Linux counts in USER_HZ, 100 a second.
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// pct is the nearest-rank percentile p of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func (b *bench) call(ctx context.Context, tool string, args map[string]any) (json.RawMessage, error) {
	data, _, err := b.timedCall(ctx, tool, args)
	return data, err
}

// timedCall is call, and the time the call took: from the request to the
// client's decoded result, without the harness's own work on it.
func (b *bench) timedCall(ctx context.Context, tool string, args map[string]any) (json.RawMessage, time.Duration, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	began := time.Now()
	res, err := b.c.CallTool(ctx, req)
	took := time.Since(began)
	if err != nil {
		return nil, took, fmt.Errorf("%s: %w", tool, err)
	}
	data, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		return nil, took, fmt.Errorf("%s: %s", tool, data)
	}
	return data, took, nil
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
	out, d, err := b.timedCall(ctx, "serial_sequence", map[string]any{"steps": stepsList, "on_failure": "stop"})
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

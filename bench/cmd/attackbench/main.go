// Command attackbench measures how hilrun's MCP server withstands clients
// that try to exhaust it: for each attack it starts a fresh `hilrun mcp
// --sim --http`, sends the attack a few times, checks after each that the
// attack ended in an error naming its limit and that the next call works,
// and reports the time each attack took and the server's peak RSS.
//
//	go build -o /tmp/hilrun ./cmd/hilrun && go run ./bench/cmd/attackbench -hilrun /tmp/hilrun [-only TEXT]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	hilrun := flag.String("hilrun", "hilrun", "the hilrun binary (built without -race)")
	rounds := flag.Int("rounds", 5, "times each attack is sent")
	only := flag.String("only", "", "send only the attacks whose name holds `TEXT`")
	flag.Parse()
	if err := run(*hilrun, *rounds, *only); err != nil {
		fmt.Fprintln(os.Stderr, "attackbench:", err)
		os.Exit(1)
	}
}

// attack is one way to try to exhaust the server; want is a text the
// answer must hold (the limit it names).
type attack struct {
	name string
	// tool and args make an MCP call; when body is set, the attack is a
	// raw HTTP POST of body bytes instead.
	tool string
	args string
	body int
	want string
	// flags are more flags of the server.
	flags []string
}

// aliasBomb is a sequence of a few hundred bytes whose vars expand to
// 9^10 strings.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("vars:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("steps:\n  - delay: 1ms\n")
	return b.String()
}

func attacks() []attack {
	bomb, _ := json.Marshal(map[string]any{"content": aliasBomb()})
	return []attack{
		{name: "YAML alias bomb (validate_sequence)", tool: "validate_sequence", args: string(bomb), want: "alias"},
		{name: "string doubling with set", tool: "serial_sequence",
			args: `{"vars": {"s": "x"}, "on_failure": "stop", "steps": [{"repeat": {"count": 64}, "steps": [{"set": {"s": "${s}${s}"}}]}]}`, want: "limit"},
		{name: "string doubling with an expression", tool: "serial_sequence",
			args: `{"vars": {"s": "x"}, "on_failure": "stop", "steps": [{"repeat": {"count": 64}, "steps": [{"set": {"s": {"expr": "s + s"}}}]}]}`, want: "limit"},
		{name: "a repeat of 300,000 steps (runs; its result is summarised)", tool: "serial_sequence",
			args: `{"steps": [{"repeat": {"count": 300000}, "steps": [{"set": {"x": 1}}]}]}`, want: "300000 iterations"},
		{name: "a repeat of 50,000,000 steps", tool: "serial_sequence",
			args: `{"steps": [{"repeat": {"count": 50000000}, "steps": [{"set": {"x": 1}}]}]}`, want: "step limit"},
		{name: "nested repeats without bound", tool: "serial_sequence",
			args: `{"steps": [{"repeat": {"count": 1000000}, "steps": [{"repeat": {"count": 1000000}, "steps": [{"set": {"x": 1}}]}]}]}`, want: "100000000"},
		{name: "an 84 MB request body", body: 84 << 20, want: "413"},
		{name: "an expression making lists of lists (30000 × 30000 items)", tool: "serial_sequence",
			args: exprAttack(`len(map(split(s, ""), {split(s, "")})) > 0`), want: "expression memory budget"},
		{name: "three nested loops over 30000 items in an expression", tool: "serial_sequence",
			args: exprAttack(`let l = split(s, ""); all(l, {all(l, {all(l, {true})})})`), want: "expression work budget"},
		{name: "the same loops with --max-expr-work 10^18, timeout_ms 2000", tool: "serial_sequence", flags: []string{"--max-expr-work", "1000000000000000000"},
			args: exprAttack(`let l = split(s, ""); all(l, {all(l, {all(l, {true})})})`), want: "sequence timeout"},
		{name: "an expression listing env", tool: "serial_sequence",
			args: `{"steps": [{"set": {"names": {"expr": "join(keys(env), \",\")"}}}, {"assert": "names == \"\""}]}`, want: "passed 2/2"},
		{name: "a 1 MiB anchor aliased 3000 times (validate_sequence)", tool: "validate_sequence",
			args: jsonText(map[string]any{"content": "vars:\n  big: &b " + strings.Repeat("x", 1<<20) + "\nsteps:\n" + strings.Repeat("  - {send: *b}\n", 3000)}), want: "alias expansion limit"},
		{name: "a 1 MiB anchor aliased 4000 times (serial_sequence, steps as a YAML string)", tool: "serial_sequence",
			args: jsonText(map[string]any{"steps": "- {set: {big: &b " + strings.Repeat("x", 1<<20) + "}}\n" + strings.Repeat("- {set: {c: *b}}\n", 4000)}), want: "alias expansion limit"},
	}
}

// exprAttack is a serial_sequence call with a 2 s timeout that sets s to
// 30000 bytes of text and asserts expr.
func exprAttack(expr string) string {
	return jsonText(map[string]any{"timeout_ms": 2000, "steps": []any{
		map[string]any{"set": map[string]any{"s": map[string]any{"expr": `repeat("x", 30000)`}}},
		map[string]any{"assert": expr},
	}})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func run(hilrun string, rounds int, only string) error {
	fmt.Printf("| attack | answer | time, median | time, max (of %d) | server peak RSS | next call |\n|---|---|--:|--:|--:|---|\n", rounds)
	for _, a := range attacks() {
		if !strings.Contains(a.name, only) {
			continue
		}
		if err := measure(hilrun, a, rounds); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return nil
}

func measure(hilrun string, a attack, rounds int) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(hilrun, append([]string{"mcp", "--sim", "--http", addr}, a.flags...)...)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	}()
	url := "http://" + addr + "/mcp"
	if err := waitListening(addr); err != nil {
		return fmt.Errorf("%w\n%s", err, stderr.String())
	}
	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "attackbench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var times []time.Duration
	answer, next := "", "works"
	for r := 0; r < rounds; r++ {
		start := time.Now()
		got, err := send(ctx, c, url, a)
		times = append(times, time.Since(start))
		if err != nil {
			return err
		}
		if !strings.Contains(got, a.want) {
			return fmt.Errorf("the answer lacks %q: %.300s", a.want, got)
		}
		answer = firstLine(got, a.want)
		if _, err := call(ctx, c, "serial_sequence", `{"steps": [{"send": "version", "expect": "hilrun"}]}`); err != nil {
			next = "fails: " + err.Error()
		}
	}
	if syscall.Kill(cmd.Process.Pid, 0) != nil {
		return fmt.Errorf("the server died:\n%s", stderr.String())
	}
	peak, err := peakRSS(cmd.Process.Pid)
	if err != nil {
		return err
	}
	slices.Sort(times)
	fmt.Printf("| %s | %s | %s | %s | %d MB | %s |\n", a.name, answer, fmtDur(times[len(times)/2]), fmtDur(times[len(times)-1]), peak>>20, next)
	return nil
}

// send makes the attack and returns its answer's text.
func send(ctx context.Context, c *client.Client, url string, a attack) (string, error) {
	if a.body > 0 {
		body := io.MultiReader(strings.NewReader(`{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "validate_sequence", "arguments": {"content": "`),
			io.LimitReader(repeatByte('x'), int64(a.body)), strings.NewReader(`"}}}`))
		req, err := http.NewRequestWithContext(ctx, "POST", url, body)
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// A server may close the connection once it has answered.
			return "", fmt.Errorf("post %d bytes: %w", a.body, err)
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return strconv.Itoa(resp.StatusCode) + " " + string(text), nil
	}
	return call(ctx, c, a.tool, a.args)
}

type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// call makes a tool call and returns its text; a tool error is text too,
// a protocol error an error.
func call(ctx context.Context, c *client.Client, tool, args string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return "", err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = m
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, ct := range res.Content {
		if t, ok := ct.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError && tool == "serial_sequence" && strings.Contains(args, `"version"`) {
		return "", errors.New(text)
	}
	return text, nil
}

// firstLine is the line of s that holds want, else the one that names the
// limit, or of the outcome; a long line is cut to show what is around want.
func firstLine(s, want string) string {
	lines := strings.Split(s, "\n")
	pick := ""
	for _, words := range [][]string{{want}, {"limit", "413"}, {"iterations"}} {
		for _, l := range lines {
			for _, w := range words {
				if pick == "" && strings.Contains(l, w) {
					pick = l
				}
			}
		}
	}
	if pick == "" {
		pick = lines[0]
	}
	pick = strings.TrimSpace(strings.ReplaceAll(pick, "|", "/"))
	if i := strings.Index(pick, want); len(pick) > 140 && i > 100 {
		pick = "…" + pick[i-100:]
	}
	if len(pick) > 140 {
		pick = pick[:139] + "…"
	}
	return pick
}

// peakRSS is the peak resident set size of process pid (VmHWM).
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/PID/status")
}

func fmtDur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitListening(addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("hilrun mcp did not listen on %s", addr)
}

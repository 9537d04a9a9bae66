package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// ladderBench writes a bench file with the health check and rungs given
// (YAML lists) and loads it.
func ladderBench(t *testing.T, text string) *steps.Bench {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lab.bench.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const healthCheck = `
health:
  - send: echo alive
    expect: alive
    timeout: 2s
`

var hang = map[string]any{"steps": []any{map[string]any{"send": "hang", "expect": "hung"}}}
var version = map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun-sim"}}}

// TestBenchLadder: the server's own bench's health check runs before each
// serial_sequence; a hung board fails it, and the ladder's second rung
// (a reset through the real OpenOCD) brings it back before the call runs,
// which the result says.
func TestBenchLadder(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n  - reset: run\n")
	e := newEnv(t, envOptions{sim: true, realOpenOCD: true, config: func(c *Config) { c.Bench = bench }})
	if r := e.sequence(hang); !r.Passed || r.Recovery != nil {
		t.Fatalf("the hang: passed %t, recovery %+v; want passed, no climb (the board was healthy)", r.Passed, r.Recovery)
	}
	res := e.call("serial_sequence", version)
	var r sequenceResult
	decode(t, res, &r)
	if !r.Passed {
		t.Fatalf("after the climb the call did not pass: %s", text(res))
	}
	rec := r.Recovery
	if rec == nil || !rec.Recovered || len(rec.Rungs) != 2 || rec.Rungs[0].Worked() || !rec.Rungs[1].Worked() {
		t.Fatalf("recovery %+v, want rung 2 to bring the board back", rec)
	}
	if !strings.HasPrefix(text(res), "bench "+bench.File+": the health check failed before serial_sequence: timed out after 2s waiting for \"alive\"") || !strings.Contains(text(res), "recovered by rung 2 (reset run)\n  rung 1 send reboot: passed; health check failed: ") {
		t.Errorf("the result's text does not say so:\n%s", text(res))
	}
	if r := e.sequence(version); r.Recovery != nil {
		t.Errorf("a healthy board climbed: %+v", r.Recovery)
	}
}

// TestBenchLadderBad: a ladder that cannot bring a hung board back makes
// the bench bad: that call and every later one is refused, saying why.
func TestBenchLadderBad(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.sequence(hang)
	msg := e.callErr("serial_sequence", version)
	for _, want := range []string{"did not run: the server's bench is bad: the health check failed before", "after rung 1 (send reboot)", "not recovered: 1 rung tried"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	if msg := e.callErr("serial_sequence", version); !strings.Contains(msg, "the server's bench is bad") || !strings.Contains(msg, "runs its health check again, and the bench takes work once it passes") {
		t.Errorf("a later call: %q", msg)
	}
	if !strings.Contains(e.log.String(), "is bad: the health check failed") {
		t.Errorf("the server's log does not say the bench is bad:\n%s", e.log.String())
	}
}

// TestBenchLadderAfterError: a call that ends in a bench error makes the
// next call climb first, from the health check.
func TestBenchLadderAfterError(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - reset: run\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	if r := e.sequence(map[string]any{"steps": []any{map[string]any{"capture": map[string]any{"camera": "/dev/video63"}}}}); r.Status != string(runner.Errored) {
		t.Fatalf("a picture from a camera that is not there: status %s, want error", r.Status)
	}
	r := e.sequence(version)
	if r.Recovery == nil || r.Recovery.Trigger != "error" || !r.Recovery.Recovered || len(r.Recovery.Rungs) != 0 {
		t.Errorf("recovery %+v, want a climb after the error that the health check ended", r.Recovery)
	}
}

// TestBenchLadderPolicy: the ladder's steps pass the server's policy like
// a client's, when the server starts: one it refuses refuses the server.
func TestBenchLadderPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, bench, want string
		policy            Policy
	}{
		{"power on a read-only server", "power:\n  console: {on: [\"true\"], off: [\"true\"]}\n" + healthCheck + "recover:\n  - power: cycle\n",
			"recover rung 1 (power cycle)", Policy{ReadOnly: true}},
		{"a host program without --allow-exec", healthCheck + "recover:\n  - exec: [uhubctl, -a, cycle]\n",
			"host programs (exec, build and upload commands) are off on this server", Policy{}},
		{"raw Tcl without --allow-debug-tcl", healthCheck + "recover:\n  - openocd: \"exec reboot\"\n",
			"raw debugger commands", Policy{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bench := ladderBench(t, tc.bench)
			_, err := New(Config{Bench: bench, Policy: tc.policy, Log: &strings.Builder{}})
			if err == nil {
				t.Fatal("the server started")
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the --bench file "+bench.File) {
				t.Errorf("error %v: want a refusal naming the --bench file and saying %q", err, tc.want)
			}
		})
	}
}

// TestClientBenchLadderNotRun: a ladder in the bench file beside a
// sequence that run_sequence runs is a client's: it never runs, though
// its health check would fail.
func TestClientBenchLadderNotRun(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"seq.yaml":      "steps:\n  - send: version\n    expect: hilrun-sim\n",
		steps.BenchFile: "health:\n  - send: echo alive\n    expect: never printed\n    timeout: 1s\nrecover:\n  - send: reboot\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root} }})
	var r sequenceResult
	decode(t, e.call("run_sequence", map[string]any{"path": "seq.yaml"}), &r)
	if !r.Passed || r.Recovery != nil {
		t.Errorf("passed %t, recovery %+v: want the sequence run without the client's ladder", r.Passed, r.Recovery)
	}
}

// TestBenchLadderBusyIsNotBad: a health check that cannot take the
// bench's port because another holder has it (a pool run's lease, another
// session's call) says the port is busy; it does not make the bench bad,
// and once the port is free the next call runs.
func TestBenchLadderBusyIsNotBad(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	key := serialx.LeaseKey(e.board.SerialPath())
	if _, err := e.srv.leases.Hold(context.Background(), key, "pool run 7", serialx.LeaseOptions{TTL: time.Minute, Note: "pool"}); err != nil {
		t.Fatal(err)
	}
	msg := e.callErr("serial_sequence", version)
	if !strings.Contains(msg, "busy") || strings.Contains(msg, "bad") {
		t.Errorf("a call while the port is held: %q, want busy and the bench not bad", msg)
	}
	e.srv.leases.Drop(key, "pool run 7")
	if r := e.sequence(version); !r.Passed {
		t.Errorf("once the port is free the call did not pass: %+v", r)
	}
}

// TestBenchLadderClimbIsBusy: while one call climbs the ladder, another
// call on the bench is told the bench is busy at once, as a held port
// is, rather than waiting for the whole climb where its client cannot
// cancel it.
func TestBenchLadderClimbIsBusy(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - delay: 60s\n  - reset: run\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.sequence(hang)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	climbed := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := e.c.CallTool(ctx, request("serial_sequence", version))
		climbed <- res
	}()
	waitFor(t, "the climb to reach its first rung", func() bool {
		m, _ := filepath.Glob(filepath.Join(e.srv.logDir, "bench", "*-rung-1"))
		return len(m) > 0
	})
	res := callWith(t, context.Background(), e.connect("second-client"), "serial_sequence", version)
	select {
	case <-climbed:
		t.Fatal("the second call waited for the climb to end")
	default:
	}
	if !res.IsError || !strings.Contains(text(res), "busy") {
		t.Errorf("a call during the climb: %s, want busy", text(res))
	}
	cancel()
}

// TestBenchLadderReleasedIsNotBad: a connection to the bench's port
// released for hand-over (another program flashes the board) cannot be
// checked through: the call is refused, the bench is not bad, and once
// console_hold takes the port back the next call runs.
func TestBenchLadderReleasedIsNotBad(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	id := e.open(nil)
	e.call("console_release", map[string]any{"console": id})
	if msg := e.callErr("serial_sequence", version); !strings.Contains(msg, "released for hand-over (console_release)") || strings.Contains(msg, "bad") {
		t.Errorf("a call while the port is released: %q, want it refused and the bench not bad", msg)
	}
	e.call("console_hold", map[string]any{"console": id})
	if r := e.sequence(version); !r.Passed {
		t.Errorf("once the port is held again the call did not pass: %+v", r)
	}
}

// TestBenchLadderHidesSecrets: a rung that holds a secret's value as it
// is written (an operator typed it into the --bench file) names it
// ***name*** in the climb a client gets, as a step's name does.
func TestBenchLadderHidesSecrets(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: echo join "+testPSK+"\n  - reset: run\n")
	e := pskServer(t, func(c *Config) { c.Bench = bench })
	e.sequence(hang)
	res := e.call("serial_sequence", version)
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), testPSK) {
		t.Errorf("the result holds the secret's value:\n%s", raw)
	}
	if !strings.Contains(text(res), "rung 1 send echo join ***wifi_psk***") {
		t.Errorf("the result's text does not name the rung with the secret hidden:\n%s", text(res))
	}
}

// TestBenchLadderOwnLineEnding: the health check sends with the bench
// file's line ending (lf by default), though it goes through a client's
// connection to the port opened with line_ending none.
func TestBenchLadderOwnLineEnding(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.open(map[string]any{"line_ending": "none"})
	if r := e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}}); !r.Passed || r.Recovery != nil {
		t.Errorf("passed %t, recovery %+v: want the health check to pass on the healthy board", r.Passed, r.Recovery)
	}
}

// TestBenchLadderChecksItsOwnPort: a client's connection to another port,
// labelled with the name of the bench's device, does not stand in for the
// bench: the health check goes to the server's own port, so a silent
// port of the client's cannot make the bench bad.
func TestBenchLadderChecksItsOwnPort(t *testing.T) {
	other := sim.New(sim.Options{})
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.open(map[string]any{"port": other.SerialPath(), "label": "console"})
	// The client's board hangs; the bench's own board is healthy.
	e.call("serial_sequence", map[string]any{"steps": []any{map[string]any{"send": "hang", "to": "console", "expect": "hung"}}, "lock_timeout_ms": 5000})
	res := callWith(t, context.Background(), e.c, "serial_sequence", map[string]any{"steps": []any{map[string]any{"send": "version", "to": e.board.SerialPath(), "expect": "hilrun-sim"}}})
	if res.IsError || strings.Contains(text(res), "bad") {
		t.Errorf("the bench's own board is healthy, yet: %s", text(res))
	}
}

// TestBenchLadderSendsSecrets: the server's bench's health check sends
// the bench's secret, with the value the server holds (the board prints
// it back, masked as the server's consoles mask what they receive, so
// the check expects as many stars as the value has bytes), and the result
// holds no value.
func TestBenchLadderSendsSecrets(t *testing.T) {
	bench := ladderBench(t, "secrets:\n  wifi_psk: env:HILRUN_TEST_UNREAD\nhealth:\n  - send: echo join ${wifi_psk}\n    expect: {regex: 'join \\*{"+strconv.Itoa(len(testPSK))+"}\\s'}\n")
	if s := bench.Ladder.Health.Secrets; len(s) != 1 || s[0].Name != "wifi_psk" {
		t.Fatalf("the health check declares secrets %+v, want wifi_psk", s)
	}
	e := pskServer(t, func(c *Config) { c.Bench = bench })
	res := e.call("serial_sequence", version)
	var r sequenceResult
	decode(t, res, &r)
	if !r.Passed || r.Recovery != nil {
		t.Fatalf("passed %t, recovery %+v: want the health check to pass with the server's value\n%s", r.Passed, r.Recovery, text(res))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), testPSK) {
		t.Errorf("the result holds the secret's value:\n%s", raw)
	}
}

// TestBenchLadderCancelledIsNotBad: a call cancelled while the bench's
// ladder climbs stops the climb, says so, and leaves the bench not bad:
// the climb had no verdict.
func TestBenchLadderCancelledIsNotBad(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - delay: 120s\n  - reset: run\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.sequence(hang)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitFor(t, "the climb to reach its first rung", func() bool {
			m, _ := filepath.Glob(filepath.Join(e.srv.logDir, "bench", "*-rung-1"))
			return len(m) > 0
		})
		cancel()
	}()
	start := time.Now()
	e.c.CallTool(ctx, request("serial_sequence", version))
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("the cancelled call took %s: the climb went on", d)
	}
	// The climb holds the bench's lock until its verdict is kept.
	waitLadderDone(t, e, bench.File)
	if bad := e.srv.ladder.badReason(); bad != "" {
		t.Errorf("a climb the client cancelled made the bench bad: %s", bad)
	}
}

// TestBadBenchCheckedAgain: a bad bench's health check runs again on a
// call once recheckEvery has passed, and nothing of its ladder; while the
// board stays hung the call is refused with the check's outcome, and once
// someone mends the board the bench is good again and the call runs.
func TestBadBenchCheckedAgain(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.sequence(hang)
	e.callErr("serial_sequence", version) // the climb fails: bad
	due := func() {
		e.srv.ladder.mu.Lock()
		e.srv.ladder.checked = time.Time{}
		e.srv.ladder.mu.Unlock()
	}
	rungs := func() int {
		m, _ := filepath.Glob(filepath.Join(e.srv.logDir, "bench", "*-rung-*"))
		return len(m)
	}
	before := rungs()
	due()
	msg := e.callErr("serial_sequence", version)
	if !strings.Contains(msg, "its health check ran again at") || !strings.Contains(msg, "waiting for \"alive\"") {
		t.Errorf("a call on the still hung board: %q, want the check's outcome", msg)
	}
	if rungs() != before {
		t.Error("checking a bad bench again climbed its ladder")
	}
	if msg := e.callErr("serial_sequence", version); !strings.Contains(msg, "is bad") || !strings.Contains(msg, "a call from") {
		t.Errorf("a call before the next check is due: %q", msg)
	}
	if rungs() != before {
		t.Error("a call before the next check is due climbed the ladder")
	}
	// Someone mends the board: a reset, as a debugger's SRST does.
	e.board.Memory().Reset()
	if e.board.Hung() {
		t.Fatal("the reset did not end the hang")
	}
	due()
	if r := e.sequence(version); !r.Passed {
		t.Fatalf("after the board was mended the call did not run: %+v", r)
	}
	if !strings.Contains(e.log.String(), "is good again: its health check passed") {
		t.Errorf("the server's log does not say the bench is good again:\n%s", e.log.String())
	}
}

// TestBadBenchCheckCancelled: a call cancelled while a bad bench's health
// check runs again still counts as that check: the next call is refused
// at once, without a check of its own, so a client that cancels cannot
// make the server check the board again and again.
func TestBadBenchCheckCancelled(t *testing.T) {
	bench := ladderBench(t, healthCheck+"recover:\n  - send: reboot\n")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Bench = bench }})
	e.sequence(hang)
	e.callErr("serial_sequence", version) // the climb fails: bad
	e.srv.ladder.mu.Lock()
	e.srv.ladder.checked = time.Time{}
	e.srv.ladder.mu.Unlock()
	checks := func() int {
		m, _ := filepath.Glob(filepath.Join(e.srv.logDir, "bench", "*-recheck"))
		return len(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitFor(t, "the check to begin", func() bool { return checks() == 1 })
		cancel()
	}()
	e.c.CallTool(ctx, request("serial_sequence", version))
	// The check holds the bench's lock until it has kept its time.
	waitLadderDone(t, e, bench.File)
	if msg := e.callErr("serial_sequence", version); !strings.Contains(msg, "is bad") || !strings.Contains(msg, "a call from") {
		t.Errorf("the call after the cancelled check: %q, want a refusal saying when the next check is due", msg)
	}
	if n := checks(); n != 1 {
		t.Errorf("%d checks ran, want the cancelled one only", n)
	}
}

// waitLadderDone waits until no call checks or climbs the bench file's
// ladder: each holds the bench's lock until its verdict is kept.
func waitLadderDone(t *testing.T, e *env, file string) {
	t.Helper()
	release, err := e.srv.locks.acquire(context.Background(), []string{ladderKey(file)}, "the test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	release()
}

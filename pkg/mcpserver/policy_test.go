package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestCheckCommand(t *testing.T) {
	raw := Policy{AllowDebugTcl: true}
	ro := Policy{ReadOnly: true, AllowDebugTcl: true}
	ranges := Policy{MemWrite: []MemRange{{0x20000000, 0x20000fff}}}
	for _, tc := range []struct {
		name   string
		policy Policy
		cmd    string
		// send is what reaches OpenOCD; "" means refused.
		send string
	}{
		{name: "raw allowed", policy: raw, cmd: "mww 0x20000000 1; mww 0 2", send: "mww 0x20000000 1; mww 0 2"},
		{name: "raw exec allowed by opt-in", policy: raw, cmd: "exec true", send: "exec true"},
		{name: "typed read", cmd: "mdw 0x20000000 4", send: "mdw 0x20000000 4"},
		{name: "typed read decimal", cmd: "mdb  536870912", send: "mdb 0x20000000"},
		{name: "typed physical read", cmd: "mdh phys 0x10 2", send: "mdh phys 0x10 2"},
		{name: "typed write", cmd: "mww 0x20000000 0xdead", send: "mww 0x20000000 0xdead"},
		{name: "typed control", cmd: "reset halt", send: "reset halt"},
		{name: "bare reset", cmd: "reset", send: "reset run"},
		{name: "read_memory", cmd: "read_memory 0x20000000 32 2", send: "read_memory 0x20000000 32 2"},
		{name: "read-only read", policy: ro, cmd: "mdw 0x20000000 4", send: "mdw 0x20000000 4"},
		{name: "read-only register", policy: ro, cmd: "reg pc", send: "reg pc"},
		{name: "read-only halt", policy: ro, cmd: "halt", send: "halt"},
		{name: "read-only resume", policy: ro, cmd: "resume", send: "resume"},
		{name: "read-only resume at an address", policy: ro, cmd: "resume 0x20000000"},
		{name: "read-only write", policy: ro, cmd: "mww 0x20000000 1"},
		{name: "read-only register write", policy: ro, cmd: "reg pc 0"},
		{name: "read-only raw", policy: ro, cmd: "exec true"},
		{name: "ranges write inside", policy: ranges, cmd: "mww 0x20000010 1", send: "mww 0x20000010 0x1"},
		{name: "ranges write outside", policy: ranges, cmd: "mww 0x0 1"},
		{name: "ranges write count past end", policy: ranges, cmd: "mwb 0x20000fff 1 2"},
		{name: "ranges register write", policy: ranges, cmd: "reg pc 0"},
		{name: "ranges resume at an address", policy: ranges, cmd: "resume 0x20000010"},
		{name: "ranges resume", policy: ranges, cmd: "resume", send: "resume"},
		{name: "value wider than width", cmd: "mwb 0x20000000 0x100"},
		{name: "address overflow", cmd: "mdw 0xfffffffffffffffc 2"},
		{name: "count too large", cmd: "mdw 0 100000000"},
		{name: "unknown command", cmd: "flash erase_sector 0 0 last"},
		{name: "exec", cmd: "exec sh -c {touch /tmp/x}"},
		{name: "exec in brackets", cmd: "echo [exec id]"},
		{name: "nested exec", cmd: "mdw [exec printf 0x20000000]"},
		{name: "eval", cmd: "eval exec id"},
		{name: "source", cmd: "source /etc/passwd"},
		{name: "open", cmd: "open /etc/passwd"},
		{name: "file", cmd: "file exists /etc/passwd"},
		{name: "socket", cmd: "socket stream 127.0.0.1:22"},
		{name: "env in address", cmd: "mdw $::env(HILRUN_MCP_TOKEN)"},
		{name: "braces in value", cmd: "mww 0x20000000 {1}"},
		{name: "quotes", cmd: `mdw "0x20000000"`},
		{name: "separator", cmd: "mdw 0x20000000; mww 0x20000000 1"},
		{name: "line break", cmd: "mdw 0x20000000\nmww 0x20000000 1"},
		{name: "backslash", cmd: `mdw 0x20000000 \x3b mww 0x20000000 1`},
		{name: "ranges separator", policy: ranges, cmd: "halt; mww 0x0 1"},
		{name: "register name with Tcl", cmd: "reg [exec id]"},
		{name: "empty", cmd: "  "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send, err := tc.policy.CheckCommand(engine.ParseCommand, tc.cmd)
			if tc.send != "" {
				if err != nil || send != tc.send {
					t.Errorf("CheckCommand(%q) = %q, %v; want %q", tc.cmd, send, err, tc.send)
				}
				return
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("CheckCommand(%q) = %q, %v; want a refusal", tc.cmd, send, err)
			}
		})
	}
}

// A read-only server runs no second Tcl command behind an allowed first
// word, whether the step says it or a variable brings it.
func TestReadOnlyOpenOCDScript(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.ReadOnly = true }})
	msg := e.callErr("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"openocd": "mdw 0x20000000; mww 0x20000000 0xdead"},
	}})
	if !strings.Contains(msg, "read-only") || !strings.Contains(msg, "not a plain word") {
		t.Errorf("static command: %s", msg)
	}
	out := e.sequence(map[string]any{
		"vars":  map[string]any{"addr": "0x20000000 [mww 0x20000000 0xdead]"},
		"steps": []any{map[string]any{"openocd": "mdw ${addr}"}},
	})
	if statuses(out) != "0:error" || !strings.Contains(out.Steps[0].Message, "not a plain word") {
		t.Errorf("command from a variable: %s %q", statuses(out), out.Steps[0].Message)
	}
}

// A hilrun.bench.yaml beside a sequence under a root is held to the rules
// of the sequence file: no launch binary, ELF files under a root.
func TestDiscoveredBenchIsNotTheOperators(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	seq := "steps:\n  - halt: true\n    probe: p\n"
	for _, sub := range []string{"launch", "elf"} {
		if err := os.Mkdir(filepath.Join(root, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, sub, "seq.yaml"), []byte(seq), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "fw.elf"), []byte("not an ELF"), 0o644)
	os.WriteFile(filepath.Join(root, "launch", steps.BenchFile),
		[]byte("probes:\n  p:\n    launch: {binary: /bin/sh, config: [x.cfg], commands: [\"mww 0 1\"]}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "elf", steps.BenchFile),
		[]byte("probes:\n  p:\n    openocd: 127.0.0.1:1\n    elf: "+filepath.Join(outside, "fw.elf")+"\n"), 0o644)

	var opened atomic.Int32
	e := newEnv(t, envOptions{config: func(c *Config) {
		c.Policy.Roots = []string{root}
		c.OpenProbe = func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
			opened.Add(1)
			return nil, errors.New("the test opens no probe")
		}
	}})
	for _, tc := range []struct{ path, want string }{
		{"launch/seq.yaml", "only taken from the server's --bench file"},
		{"elf/seq.yaml", "outside the --root folders"},
	} {
		if msg := e.callErr("run_sequence", map[string]any{"path": tc.path}); !strings.Contains(msg, tc.want) || !strings.Contains(msg, steps.BenchFile) {
			t.Errorf("%s: %s", tc.path, msg)
		}
	}
	if n := opened.Load(); n != 0 {
		t.Errorf("a probe was opened %d times", n)
	}
}

// A hilrun.bench.yaml beside a sequence that is a link out of the roots is
// refused before its target is read: its keys and errors would tell the
// client what an outside file holds.
func TestDiscoveredBenchLinkOutIsRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("API_TOKEN: \"hunter2-secret\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "seq.yaml"), []byte("steps:\n  - log: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, steps.BenchFile)); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{config: func(c *Config) { c.Policy.Roots = []string{root} }})
	msg := e.callErr("run_sequence", map[string]any{"path": "seq.yaml"})
	if !strings.Contains(msg, "outside the --root folders") || strings.Contains(msg, "API_TOKEN") || strings.Contains(msg, "hunter2") {
		t.Errorf("run_sequence with a bench file linked out of the root: %s", msg)
	}
}

// slowOpener opens real consoles, the first one slowly, and counts them.
type slowOpener struct {
	mu    sync.Mutex
	n     int
	delay time.Duration
}

func (o *slowOpener) open(ctx context.Context, name string, cfg serialx.Config) (Console, error) {
	o.mu.Lock()
	o.n++
	first := o.n == 1
	o.mu.Unlock()
	if first {
		time.Sleep(o.delay)
	}
	cfg.Devices = devices.Anywhere()
	return serialx.Open(ctx, name, cfg)
}

func (o *slowOpener) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// Two serial_open calls of one port: the one that waited for the port finds
// it open rather than opening it a second time.
func TestSerialOpenWaitsThenFindsItOpen(t *testing.T) {
	op := &slowOpener{delay: 300 * time.Millisecond}
	e := newEnv(t, envOptions{config: func(c *Config) { c.OpenConsole = op.open }})
	other := e.connect("second-client")
	args := map[string]any{"port": e.board.SerialPath(), "lock_timeout_ms": 60000}
	first := make(chan string, 1)
	go func() {
		res := callWith(t, context.Background(), e.c, "serial_open", args)
		first <- text(res)
	}()
	waitFor(t, "the first serial_open to hold the port", func() bool {
		return e.srv.locks.holderOf(portKey(realPort(e.board.SerialPath()))) != ""
	})
	res := callWith(t, context.Background(), other, "serial_open", args)
	if !res.IsError || !strings.Contains(text(res), "already open as connection c1") {
		t.Errorf("second serial_open: %s", text(res))
	}
	if msg := <-first; !strings.Contains(msg, "opened ") {
		t.Errorf("first serial_open: %s", msg)
	}
	if n := op.count(); n != 1 {
		t.Errorf("the port was opened %d times", n)
	}
}

// A sequence that planned to open a port itself, then waited while
// serial_open opened it, borrows that connection instead of opening the
// port a second time.
func TestSequenceReplansAfterWaiting(t *testing.T) {
	op := &slowOpener{delay: 300 * time.Millisecond}
	e := newEnv(t, envOptions{config: func(c *Config) { c.OpenConsole = op.open }})
	other := e.connect("second-client")
	port := e.board.SerialPath()
	opened := make(chan string, 1)
	go func() {
		res := callWith(t, context.Background(), e.c, "serial_open", map[string]any{"port": port})
		opened <- text(res)
	}()
	waitFor(t, "serial_open to hold the port", func() bool {
		return e.srv.locks.holderOf(portKey(realPort(port))) != ""
	})
	res := callWith(t, context.Background(), other, "serial_sequence", map[string]any{
		"lock_timeout_ms": 60000,
		"steps":           []any{map[string]any{"send": "echo borrowed", "to": port, "expect": "borrowed"}},
	})
	if res.IsError {
		t.Fatalf("sequence: %s", text(res))
	}
	var out sequenceResult
	decode(t, res, &out)
	if !out.Passed {
		t.Errorf("sequence: %s %s", statuses(out), out.Error)
	}
	if msg := <-opened; !strings.Contains(msg, "opened ") {
		t.Errorf("serial_open: %s", msg)
	}
	if n := op.count(); n != 1 {
		t.Errorf("the port was opened %d times, want once (by serial_open)", n)
	}
}

// A sequence that planned to borrow a connection that was closed while the
// sequence waited for its port says so instead of using a closed console.
func TestSequenceAfterItsConnectionClosed(t *testing.T) {
	e := newEnv(t, envOptions{})
	other := e.connect("second-client")
	conn := e.open(nil)
	// Hold the port as serial_close would, so that the sequence waits.
	release, err := e.srv.locks.acquire(context.Background(), []string{portKey(realPort(e.board.SerialPath()))}, "serial_close", 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := make(chan string, 1)
	go func() {
		res := callWith(t, context.Background(), other, "serial_sequence", map[string]any{
			"lock_timeout_ms": 60000,
			"steps":           []any{map[string]any{"send": "echo x", "to": conn, "expect": "x"}},
		})
		seq <- text(res)
	}()
	waitFor(t, "the sequence to plan, then wait for the port", func() bool { return e.srv.locks.waiters() > 0 })
	// What serial_close does while it holds the port.
	e.srv.mu.Lock()
	c := e.srv.conns[conn]
	delete(e.srv.conns, conn)
	e.srv.mu.Unlock()
	c.console.Close()
	release()
	if msg := <-seq; !strings.Contains(msg, "connection "+conn) || !strings.Contains(msg, "was closed while this sequence waited") {
		t.Errorf("sequence: %s", msg)
	}
}

// A call that reaches a probe after Close opens no session that nothing
// would close.
func TestNoProbeSessionAfterClose(t *testing.T) {
	var opened atomic.Int32
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) {
		c.OpenProbe = func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
			opened.Add(1)
			return engine.ProbeDialer(gate.Permissive(environ.Host()))(ctx, p, "")
		}
	}})
	e.call("mem_read", map[string]any{"address": "0x20000000"})
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if msg := e.callErr("mem_read", map[string]any{"address": "0x20000000"}); !strings.Contains(msg, "shutting down") {
		t.Errorf("mem_read after Close: %s", msg)
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("probe sessions opened: %d, want 1 (before Close)", n)
	}
	e.srv.mu.Lock()
	n := len(e.srv.probes)
	e.srv.mu.Unlock()
	if n != 0 {
		t.Errorf("%d probe sessions left in the pool after Close", n)
	}
}

// TestCloseWaitsForCallsInFlight closes the server while a sequence runs:
// the call is cancelled, its finally steps run on a console that is still
// open, and only then does Close close it.
func TestCloseWaitsForCallsInFlight(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	done := make(chan sequenceResult, 1)
	go func() {
		done <- e.sequence(map[string]any{
			"steps":   []any{map[string]any{"send": "echo started", "expect": "started", "read_timeout": 20}, map[string]any{"delay": "120s"}},
			"finally": []any{map[string]any{"send": "echo cleaned", "expect": "cleaned", "read_timeout": 20}},
		})
	}()
	waitFor(t, "the sequence to send", func() bool {
		for _, l := range e.board.Received() {
			if l.Line == "echo started" {
				return true
			}
		}
		return false
	})
	closed := make(chan error, 1)
	go func() { closed <- e.srv.Close() }()
	var r sequenceResult
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the sequence did not end after Close")
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if got := statuses(r); !strings.Contains(got, "finally.0:passed") {
		t.Errorf("steps = %s: finally did not run on an open console", got)
	}
}

// run_sequence's probes argument may bind a probe only to the server's own
// debuggers, or to an address an --allow-probe glob names: any other
// address could reach any host.
func TestProbesArgumentNeedsAllowProbe(t *testing.T) {
	root := t.TempDir()
	seq := "probes:\n  p: {}\nsteps:\n  - mem_read: 0x20000000\n    probe: p\n"
	if err := os.WriteFile(filepath.Join(root, "probe.yaml"), []byte(seq), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		allow   []string
		addr    func(e *env) string
		refused bool
	}{
		{name: "elsewhere", addr: func(*env) string { return "10.0.0.1:4444" }, refused: true},
		{name: "another glob", allow: []string{"192.168.*:4444"}, addr: func(*env) string { return "10.0.0.1:4444" }, refused: true},
		{name: "the server's own", addr: func(e *env) string { return e.telnet }},
		{name: "allowed", allow: []string{"127.0.0.1:*"}, addr: func(e *env) string { return e.telnet }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{sim: tc.name == "the server's own", config: func(c *Config) {
				c.Policy.Roots = []string{root}
				c.Policy.AllowProbes = tc.allow
			}})
			res := callWith(t, context.Background(), e.c, "run_sequence", map[string]any{"path": "probe.yaml", "probes": map[string]any{"p": tc.addr(e)}})
			msg := text(res)
			switch {
			case tc.refused && (!res.IsError || !strings.Contains(msg, "--allow-probe")):
				t.Errorf("bound to %s: %s; want a refusal naming --allow-probe", tc.addr(e), msg)
			case !tc.refused && (res.IsError || strings.Contains(msg, "--allow-probe")):
				t.Errorf("bound to %s: %s; want the run", tc.addr(e), msg)
			}
		})
	}
}

package mcpserver

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// needTool skips a test when a program is missing, and fails it under
// CI=true.
func needTool(t *testing.T, name string) {
	t.Helper()
	testenv.NeedTool(t, name, "scripts/test installs what the tests need")
}

// ccProject is a root holding a C program that builds with the host's cc
// and one that misses a header.
func ccProject(t *testing.T) string {
	t.Helper()
	needTool(t, "cc")
	dir := t.TempDir()
	files := map[string]string{
		"main.c":   "int counter = 1;\nint main(void) { return counter - 1; }\n",
		"broken.c": "#include \"hilrun_missing.h\"\nint x;\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rootEnv is a server with roots that lets host programs run in them
// (--allow-exec --root).
func rootEnv(t *testing.T, o envOptions, roots ...string) *env {
	cfg := o.config
	o.config = func(c *Config) {
		c.Policy.Roots = roots
		c.Policy.AllowExec = true
		if cfg != nil {
			cfg(c)
		}
	}
	return newEnv(t, o)
}

func (e *env) readResource(uri string) string {
	e.t.Helper()
	var req mcp.ReadResourceRequest
	req.Params.URI = uri
	res, err := e.c.ReadResource(context.Background(), req)
	if err != nil {
		e.t.Fatalf("read %s: %v", uri, err)
	}
	var parts []string
	for _, c := range res.Contents {
		if tc, ok := c.(mcp.TextResourceContents); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

func TestBuildTool(t *testing.T) {
	dir := ccProject(t)
	e := rootEnv(t, envOptions{}, dir)

	res := e.call("build", map[string]any{"command": []any{"cc", "-o", "prog", "main.c"}, "elf": "prog"})
	var ok buildResult
	decode(t, res, &ok)
	if !ok.OK || ok.State != taskDone || ok.FlashBytes == nil || *ok.FlashBytes == 0 || ok.RAMBytes == nil || ok.TaskID == "" {
		t.Errorf("build: %+v", ok)
	}
	if !strings.HasPrefix(text(res), "build ok: flash ") {
		t.Errorf("text: %s", text(res))
	}

	res = e.call("build", map[string]any{"command": []any{"cc", "-c", "broken.c", "-o", "broken.o"}})
	var bad buildResult
	decode(t, res, &bad)
	if bad.OK || bad.Class != "MissingHeader" || bad.Diagnostic == nil || bad.Diagnostic.File != "broken.c" ||
		bad.Diagnostic.Line != 1 || bad.Diagnostic.Column != 10 || bad.ExitCode == nil || *bad.ExitCode == 0 {
		t.Errorf("broken build: %+v %+v", bad, bad.Diagnostic)
	}
	if !strings.HasPrefix(text(res), "build failed: MissingHeader broken.c:1:10: ") {
		t.Errorf("text: %s", text(res))
	}
	if log := e.readResource(bad.LogResource); !strings.Contains(log, "hilrun_missing.h") {
		t.Errorf("log %s: %q", bad.LogResource, log)
	}
	var st taskStatus
	decode(t, e.call("task_status", map[string]any{"task_id": bad.TaskID}), &st)
	if st.State != taskDone || st.Result == nil || st.Result.Class != "MissingHeader" || len(st.Progress) == 0 {
		t.Errorf("task_status: %+v", st)
	}

	var slow buildResult
	decode(t, e.call("build", map[string]any{"command": []any{"sleep", "5"}, "timeout_ms": 100}), &slow)
	if slow.OK || slow.Class != "Timeout" || !strings.Contains(slow.Summary, "timed out after 100ms") {
		t.Errorf("timeout: %+v", slow)
	}

	// A tool that is not installed is a tool error: nothing was built.
	if msg := e.callErr("build", map[string]any{"command": []any{"hilrun-no-such-compiler"}}); !strings.Contains(msg, "not installed") {
		t.Errorf("missing tool: %s", msg)
	}
}

func TestBuildFirmware(t *testing.T) {
	needTool(t, "make")
	needTool(t, "arm-none-eabi-gcc")
	src := filepath.Dir(repoFile(t, "firmware/sim/Makefile"))
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-R", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the firmware: %v: %s", err, out)
	}
	e := rootEnv(t, envOptions{}, dir)
	var ok buildResult
	decode(t, e.call("build", map[string]any{"command": []any{"make", "BUILD=out"}, "dir": "sim", "elf": "out/sim.elf", "timeout_ms": 60000}), &ok)
	if !ok.OK || ok.FlashBytes == nil || *ok.FlashBytes == 0 || ok.RAMBytes == nil || *ok.RAMBytes == 0 {
		t.Errorf("build: %+v", ok)
	}
	var bad buildResult
	decode(t, e.call("build", map[string]any{"command": []any{"make", "BUILD=out", "broken-missing-header"}, "dir": "sim"}), &bad)
	if bad.OK || bad.Class != "MissingHeader" || bad.Diagnostic == nil || bad.Diagnostic.File != "broken/missing_header.c" || bad.Diagnostic.Line != 6 {
		t.Errorf("broken build: %+v %+v", bad, bad.Diagnostic)
	}
}

func TestBuildInBackground(t *testing.T) {
	dir := ccProject(t)
	e := rootEnv(t, envOptions{}, dir)
	// The build runs until the test creates the gate file, then half a
	// second more.
	gate := filepath.Join(t.TempDir(), "gate")
	var started buildResult
	decode(t, e.call("build", map[string]any{"command": []any{"sh", "-c", "until [ -e '" + gate + "' ]; do sleep 0.01; done; sleep 0.5"}, "background": true}), &started)
	if started.State != taskRunning || started.TaskID == "" {
		t.Fatalf("background: %+v", started)
	}
	var st taskStatus
	decode(t, e.call("task_status", map[string]any{"task_id": started.TaskID}), &st)
	if st.State != taskRunning || st.Result != nil {
		t.Errorf("while running: %+v", st)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the task", func() bool {
		decode(t, e.call("task_status", map[string]any{"task_id": started.TaskID}), &st)
		return st.State != taskRunning
	})
	if st.State != taskDone || st.Result == nil || !st.Result.OK || st.DurationMS < 400 {
		t.Errorf("done: %+v", st)
	}
	if msg := e.callErr("task_status", map[string]any{"task_id": "t999"}); !strings.Contains(msg, "no task") {
		t.Errorf("unknown task: %s", msg)
	}
}

func TestCloseCancelsBackgroundBuild(t *testing.T) {
	dir := ccProject(t)
	e := rootEnv(t, envOptions{}, dir)
	var started buildResult
	decode(t, e.call("build", map[string]any{"command": []any{"sleep", "30"}, "background": true}), &started)
	t0 := time.Now()
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("Close took %s", d)
	}
	tk := e.srv.tasks.find(started.TaskID)
	if tk == nil || !tk.done() {
		t.Fatalf("the task still runs after Close")
	}
	if tk.state != taskCancelled {
		t.Errorf("state %s, want cancelled", tk.state)
	}
}

func TestBuildPolicy(t *testing.T) {
	dir := ccProject(t)
	outside := t.TempDir()
	tests := []struct {
		name  string
		roots []string
		cfg   func(*Config)
		tool  string
		args  map[string]any
		want  string
	}{
		{"no root", nil, nil, "build", map[string]any{"command": []any{"true"}}, "start hilrun mcp with --root DIR"},
		{"no --allow-exec", []string{dir}, func(c *Config) { c.Policy.AllowExec = false }, "build", map[string]any{"command": []any{"true"}}, "--allow-exec"},
		{"no --allow-exec upload", []string{dir}, func(c *Config) { c.Policy.AllowExec = false }, "upload", map[string]any{"command": []any{"true"}}, "--allow-exec"},
		{"no --allow-exec step", []string{dir}, func(c *Config) { c.Policy.AllowExec = false }, "serial_sequence",
			map[string]any{"steps": []any{map[string]any{"build": map[string]any{"command": []any{"true"}}}}}, "--allow-exec"},
		{"dir outside the root", []string{dir}, nil, "build", map[string]any{"command": []any{"true"}, "dir": outside}, "outside the --root folders"},
		{"dir climbing out", []string{dir}, nil, "build", map[string]any{"command": []any{"true"}, "dir": "../"}, "outside the --root folders"},
		{"elf outside the root", []string{dir}, nil, "build", map[string]any{"command": []any{"true"}, "elf": filepath.Join(outside, "fw.elf")}, "outside the --root folders"},
		{"pio project outside", []string{dir}, nil, "build", map[string]any{"pio": map[string]any{"project_dir": outside}}, "pio.project_dir"},
		{"image outside", []string{dir}, nil, "upload", map[string]any{"openocd": map[string]any{"file": filepath.Join(outside, "x.bin")}}, "outside the --root folders"},
		{"read-only upload", []string{dir}, func(c *Config) { c.Policy.ReadOnly = true }, "upload", map[string]any{"command": []any{"true"}}, "read-only"},
		{"read-only upload step", []string{dir}, func(c *Config) { c.Policy.ReadOnly = true }, "serial_sequence",
			map[string]any{"steps": []any{map[string]any{"upload": map[string]any{"command": []any{"true"}}}}}, "read-only"},
		{"shell step", []string{dir}, nil, "serial_sequence",
			map[string]any{"steps": []any{map[string]any{"build": map[string]any{"command": "true", "shell": true}}}}, "shell: true is not run over MCP"},
		{"no shell argument", []string{dir}, nil, "build", map[string]any{"command": []any{"true"}, "shell": true}, "unknown field"},
		{"build with a port", []string{dir}, nil, "build", map[string]any{"command": []any{"true"}, "port": "/dev/ttyACM0"}, "use upload"},
		{"port refused", []string{dir}, func(c *Config) { c.Policy.DenyPorts = []string{"/dev/ttyACM*"} }, "upload",
			map[string]any{"command": []any{"true"}, "port": "/dev/ttyACM0"}, "--deny-port"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := rootEnv(t, envOptions{config: tc.cfg}, tc.roots...)
			msg := e.callErr(tc.tool, tc.args)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("got %q, want %q", msg, tc.want)
			}
			if e.srv.tasks.find("t1") != nil {
				t.Errorf("a refused call made a task")
			}
		})
	}
}

func TestBuildStepInSequence(t *testing.T) {
	dir := ccProject(t)
	e := rootEnv(t, envOptions{}, dir)
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"build": map[string]any{"command": []any{"cc", "-o", "prog", "main.c"}, "elf": "prog"}, "id": "fw"},
		map[string]any{"assert": "steps.fw.flash_bytes > 0"},
	}})
	if !out.Passed {
		t.Fatalf("sequence: %s %+v", statuses(out), out.Steps)
	}
	var logs []string
	for _, uri := range out.LogResources {
		if strings.Contains(uri, "/build/") {
			logs = append(logs, uri)
		}
	}
	if len(logs) != 1 {
		t.Fatalf("build logs %v", out.LogResources)
	}
	e.readResource(logs[0])
}

func TestBuildProgress(t *testing.T) {
	dir := ccProject(t)
	e := rootEnv(t, envOptions{}, dir)
	req := request("build", map[string]any{"command": []any{"seq", "1", "200"}})
	req.Params.Meta = &mcp.Meta{ProgressToken: "b-1"}
	res, err := e.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var ps []mcp.JSONRPCNotification
	waitFor(t, "progress", func() bool { ps = e.notifications("notifications/progress"); return len(ps) >= 1 })
	prev := 0.0
	for _, p := range ps {
		f := p.Params.AdditionalFields
		if f["progressToken"] != "b-1" {
			t.Errorf("token %v", f["progressToken"])
		}
		if v := num(f["progress"]); v <= prev {
			t.Errorf("progress not increasing: %v", ps)
		} else {
			prev = v
		}
	}
	// 200 lines in well under a second: throttled to a few notifications.
	if len(ps) > 20 {
		t.Errorf("%d progress notifications for a short build", len(ps))
	}
}

func TestUploadImageThroughOpenOCD(t *testing.T) {
	dir := t.TempDir()
	img := make([]byte, 64)
	binary.LittleEndian.PutUint32(img, 0xdeadbeef)
	binary.LittleEndian.PutUint32(img[4:], 0x12345678)
	if err := os.WriteFile(filepath.Join(dir, "img.bin"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	e := rootEnv(t, envOptions{sim: true, realOpenOCD: true}, dir)
	var up buildResult
	res := e.call("upload", map[string]any{"openocd": map[string]any{"file": "img.bin", "method": "load", "offset": "0x20008000", "verify": true}})
	decode(t, res, &up)
	if !up.OK || up.Method != "load" || !strings.Contains(up.Output, "downloaded 64 bytes") {
		t.Errorf("upload: %+v (%s)", up, text(res))
	}
	var m memResult
	decode(t, e.call("mem_read", map[string]any{"address": "0x20008000", "count": 2}), &m)
	if len(m.Values) != 2 || m.Values[0] != 0xdeadbeef || m.Values[1] != 0x12345678 {
		t.Errorf("memory after the upload: %v", m.Hex)
	}
	if log := e.readResource(up.LogResource); !strings.Contains(log, "downloaded") {
		t.Errorf("log: %q", log)
	}
}

func TestUploadLimitedMemWrites(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "img.bin"), make([]byte, 4), 0o644)
	e := rootEnv(t, envOptions{sim: true, config: func(c *Config) {
		c.Policy.MemWrite = []MemRange{{Start: 0x20000000, End: 0x200000ff}}
	}}, dir)
	msg := e.callErr("upload", map[string]any{"openocd": map[string]any{"file": "img.bin", "method": "load", "offset": 0x20000000}})
	if !strings.Contains(msg, "--allow-mem-write") {
		t.Errorf("got %s", msg)
	}
}

func TestUploadHandsOverThePort(t *testing.T) {
	dir := t.TempDir()
	e := rootEnv(t, envOptions{sim: true}, dir)
	c1 := e.open(map[string]any{"label": "board"})
	conn, err := e.srv.connection(c1)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var up *mcp.CallToolResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		up = callWith(t, context.Background(), e.connect("uploader"), "upload", map[string]any{"command": []any{"sleep", "1"}, "port": "board"})
	}()
	key := portKey(realPort(conn.port))
	waitFor(t, "the upload to hold the port", func() bool { return strings.Contains(e.srv.locks.holderOf(key), "upload") })
	waitFor(t, "the console to be released", func() bool { return conn.console.Stats().Released })

	if msg := e.callErr("serial_expect", map[string]any{"connection": c1, "pattern": "sim> "}); !strings.Contains(msg, "busy") || !strings.Contains(msg, "upload") {
		t.Errorf("expect during the upload: %s", msg)
	}
	if msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"capture": map[string]any{"duration": "100ms"}, "to": c1}}}); !strings.Contains(msg, "busy") {
		t.Errorf("capture during the upload: %s", msg)
	}
	// A caller that waits gets the port once the upload gave it back.
	var w writeResult
	decode(t, e.call("serial_write", map[string]any{"connection": c1, "data": "echo back", "newline": true, "lock_timeout_ms": 10000}), &w)
	wg.Wait()
	if up.IsError {
		t.Fatalf("upload: %s", text(up))
	}
	var out buildResult
	decode(t, up, &out)
	if !out.OK {
		t.Errorf("upload: %+v", out)
	}
	if conn.console.Stats().Released {
		t.Errorf("the console is still released")
	}
	var ex expectResult
	decode(t, e.call("serial_expect", map[string]any{"connection": c1, "pattern": "back", "cursor": w.Cursor, "timeout_ms": 20000}), &ex)
	if !ex.Matched {
		t.Errorf("after the upload: %+v", ex)
	}
}

func TestUploadStepReleasesConnection(t *testing.T) {
	dir := t.TempDir()
	e := rootEnv(t, envOptions{sim: true}, dir)
	c1 := e.open(nil)
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"upload": map[string]any{"command": []any{"true"}, "port": c1}},
		map[string]any{"send": "echo again", "expect": "again", "to": c1},
	}})
	if !out.Passed {
		t.Fatalf("sequence: %s %+v", statuses(out), out.Steps)
	}
	conn, err := e.srv.connection(c1)
	if err != nil {
		t.Fatal(err)
	}
	_, timeline := conn.console.LogPaths()
	data, err := os.ReadFile(timeline)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"event":"released"`) {
		t.Errorf("the connection was not released for the upload: %s", data)
	}
}

// A console a sequence opens for itself is seen from its first byte; one
// it borrows from a connection is not.
func TestSequenceConsolesOpenedForTheRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	c, err := e.srv.openSerial(context.Background(), "console", serialx.Config{Path: e.board.SerialPath()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fresh := openedForRun(c)
	if _, ok := fresh.(runner.OpenedConsole); !ok {
		t.Errorf("a console opened for the run is %T, not a runner.OpenedConsole", fresh)
	}
	if _, ok := fresh.(interface{ Release(context.Context) error }); !ok {
		t.Errorf("a console opened for the run (%T) lost its hand-over", fresh)
	}
	lent := handOver(borrowed{c, nil}, c)
	if _, ok := lent.(runner.OpenedConsole); ok {
		t.Errorf("a borrowed console (%T) claims to be opened for the run", lent)
	}
}

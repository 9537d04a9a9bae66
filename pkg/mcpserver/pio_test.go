package mcpserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/pio/piotest"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// pioEnv is a server with --allow-exec and a --root holding a PlatformIO
// project, its pio a replay of scenarios.
func pioEnv(t *testing.T, r pio.Runner, envs ...string) (*env, string) {
	t.Helper()
	piotest.Note(t)
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	ini := "[platformio]\n"
	for _, e := range envs {
		ini += "[env:" + e + "]\nboard = " + e + "\n"
	}
	if err := os.WriteFile(filepath.Join(proj, "platformio.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	if rp, ok := r.(*piotest.Replay); ok {
		rp.Dir = proj
	}
	e := newEnv(t, envOptions{config: func(c *Config) {
		c.Policy.AllowExec = true
		c.Policy.Roots = []string{root}
		c.PIORunner = r
		c.Wire = func(g gate.Policy) (runner.Bench, ProbeDialer, func(*steps.Device) serialx.Config) {
			b, d, sc := engine.MCPWire(g)
			b.Build = engine.PIOBuilder(r)(nil, nil, g.Procs)
			return b, d, sc
		}
	}})
	return e, proj
}

func TestPIORefusedWithoutExec(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"boards_uno"}}
	e := newEnv(t, envOptions{config: func(c *Config) { c.PIORunner = r }})
	for _, tool := range []string{"list_boards", "system_info", "check_project", "run_tests"} {
		msg := e.callErr(tool, map[string]any{"filter": "uno", "project_dir": "/tmp"})
		if !strings.Contains(msg, "--allow-exec") && !strings.Contains(msg, "--root") {
			t.Errorf("%s: %s", tool, msg)
		}
	}
	if len(r.Calls()) != 0 {
		t.Errorf("pio ran: %q", r.Calls())
	}
}

func TestPIOBoardsAndDevices(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"boards_uno", "boards_none", "device_list", "system_info"}}
	e, _ := pioEnv(t, r, "uno")
	var boards boardsResult
	decode(t, e.call("list_boards", map[string]any{"filter": "uno"}), &boards)
	if len(boards.Boards) != 3 || boards.Boards[0].ID != "uno" {
		t.Errorf("boards = %+v", boards)
	}
	var b pio.Board
	decode(t, e.call("get_board_info", map[string]any{"board_id": "uno"}), &b)
	if b.MCU != "ATMEGA328P" || b.ROM != 32256 {
		t.Errorf("board = %+v", b)
	}
	if msg := e.callErr("get_board_info", map[string]any{"board_id": "no-such-board"}); !strings.Contains(msg, `unknown board "no-such-board"`) {
		t.Errorf("unknown board: %s", msg)
	}
	var devs devicesResult
	decode(t, e.call("list_devices", nil), &devs)
	if len(devs.Devices) != 3 || devs.Devices[1].Board != "Silicon Labs CP210x UART bridge" {
		t.Errorf("devices = %+v", devs)
	}
	var info systemInfoResult
	decode(t, e.call("system_info", nil), &info)
	if len(info.Items) == 0 || info.Items[0].Value != "6.1.18" {
		t.Errorf("system info = %+v", info)
	}
}

// TestPIOBeforeRun checks what is refused before pio runs: a project
// outside the roots, a folder without platformio.ini, an unknown
// environment.
func TestPIOBeforeRun(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"check"}}
	e, proj := pioEnv(t, r, "uno")
	outside := t.TempDir()
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"check_project", map[string]any{"project_dir": outside}, "outside the --root folders"},
		{"run_tests", map[string]any{"project_dir": "../../.."}, "outside the --root folders"},
		{"init_project", map[string]any{"project_dir": filepath.Join(outside, "new"), "board": "uno"}, "outside the --root folders"},
		{"check_project", map[string]any{"project_dir": filepath.Dir(proj)}, "has no platformio.ini"},
		{"check_project", map[string]any{"project_dir": proj, "env": "esp32dev"}, `no environment "esp32dev" (it has uno)`},
		{"install_library", map[string]any{"project_dir": proj, "library": "--global"}, "give a library name"},
		{"clean_project", map[string]any{}, "project_dir is required"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.want, func(t *testing.T) {
			if msg := e.callErr(tt.tool, tt.args); !strings.Contains(msg, tt.want) {
				t.Errorf("%s: %s, want %q", tt.tool, msg, tt.want)
			}
		})
	}
	if len(r.Calls()) != 0 {
		t.Errorf("pio ran: %q", r.Calls())
	}
}

func TestPIOCheckAndTests(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"check", "test"}}
	e, proj := pioEnv(t, r, "uno")
	var chk pioResult
	decode(t, e.call("check_project", map[string]any{"project_dir": proj, "env": "uno"}), &chk)
	if chk.Verb != "check_project" || !chk.OK || len(chk.Check) != 1 || len(chk.Check[0].Defects) != 3 {
		t.Fatalf("check = %+v", chk)
	}
	d := chk.Check[0].Defects[1]
	if d.Severity != "medium" || d.File != filepath.Join(proj, "src/main.cpp") || d.Line != 21 || d.ID != "uninitvar" {
		t.Errorf("defect = %+v", d)
	}

	res := e.call("run_tests", map[string]any{"project_dir": proj, "environment": "uno"})
	var tr buildResult
	decode(t, res, &tr)
	if tr.OK || len(tr.Tests) != 3 || tr.Failures == nil || *tr.Failures != 1 || tr.Kind != "pio_test" {
		t.Fatalf("tests = %+v", tr)
	}
	want := testCaseOut{Suite: "test_ring", Env: "uno", Name: "test_ring_wrap", Status: "FAILED", Message: "Expected 4 Was 0", File: "test/test_ring/test_main.c", Line: 42}
	if tr.Tests[1] != want {
		t.Errorf("case = %+v\nwant %+v", tr.Tests[1], want)
	}
	if !strings.Contains(text(res), "uno:test_ring/test_ring_wrap FAILED: Expected 4 Was 0 (test/test_ring/test_main.c:42)") {
		t.Errorf("text: %s", text(res))
	}
	// The run's report holds the cases too.
	if tr.ReportResource == "" {
		t.Fatal("no report_resource")
	}
	if rep := e.readResource(tr.ReportResource); !strings.Contains(rep, `"test_ring_wrap"`) {
		t.Errorf("the run report lacks the test case: %.2000s", rep)
	}
}

func TestPIOBackgroundTask(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"test"}}
	e, proj := pioEnv(t, r, "uno")
	var started buildResult
	decode(t, e.call("run_tests", map[string]any{"project_dir": proj, "env": "uno", "background": true}), &started)
	if started.State != taskRunning || started.TaskID == "" {
		t.Fatalf("started = %+v", started)
	}
	// The task's end is an event: its over channel closes.
	<-e.srv.tasks.find(started.TaskID).over
	var st taskStatus
	res := e.call("task_status", map[string]any{"task_id": started.TaskID})
	decode(t, res, &st)
	if st.State != taskDone || st.Result == nil || len(st.Result.Tests) != 3 || st.Result.OK {
		t.Errorf("status = %+v", st)
	}
	if !strings.Contains(text(res), "test_ring_wrap FAILED") {
		t.Errorf("text: %s", text(res))
	}
	// A task that has ended is not cancelled.
	var c cancelResult
	decode(t, e.call("task_cancel", map[string]any{"task_id": started.TaskID}), &c)
	if c.State != taskDone {
		t.Errorf("cancel of an ended task = %+v", c)
	}
}

// blockingPIO runs until its call is cancelled.
type blockingPIO struct{ started chan struct{} }

func (b *blockingPIO) RunPIO(ctx context.Context, dir string, args []string, out io.Writer) (int, error) {
	fmt.Fprintln(out, "Building & Uploading...")
	close(b.started)
	<-ctx.Done()
	return -1, fmt.Errorf("run pio: %w", ctx.Err())
}

func TestPIOTaskCancel(t *testing.T) {
	b := &blockingPIO{started: make(chan struct{})}
	e, proj := pioEnv(t, b, "uno")
	var started pioResult
	decode(t, e.call("check_project", map[string]any{"project_dir": proj, "background": true}), &started)
	<-b.started
	// Another session may not cancel it.
	c2 := e.connect("second")
	res := callWith(t, context.Background(), c2, "task_cancel", map[string]any{"task_id": started.TaskID})
	if !res.IsError || !strings.Contains(text(res), "only that session may cancel it") {
		t.Fatalf("task_cancel by another session: %s", text(res))
	}
	var c cancelResult
	decode(t, e.call("task_cancel", map[string]any{"task_id": started.TaskID}), &c)
	if c.State != taskCancelled {
		t.Errorf("cancel = %+v", c)
	}
	var st taskStatus
	decode(t, e.call("task_status", map[string]any{"task_id": started.TaskID}), &st)
	if st.State != taskCancelled || !strings.Contains(st.Error, "cancelled") {
		t.Errorf("status = %+v", st)
	}
	if len(st.Progress) == 0 || st.Progress[0] != "Building & Uploading..." {
		t.Errorf("progress = %q", st.Progress)
	}
}

func TestPIOLibraries(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"pkg_search", "pkg_list", "pkg_install", "pkg_uninstall", "pkg_update"}}
	e, proj := pioEnv(t, r, "esp32dev", "nucleo_f401re")
	var sr pio.SearchResult
	decode(t, e.call("search_libraries", map[string]any{"query": "onewire"}), &sr)
	if sr.Total != 61 || sr.Libraries[0].Name != "OneWire" {
		t.Errorf("search = %+v", sr)
	}
	var libs librariesResult
	decode(t, e.call("list_installed_libraries", map[string]any{"project_dir": proj}), &libs)
	if len(libs.Libraries) != 3 || libs.Libraries[2].Depth != 1 {
		t.Errorf("libraries = %+v", libs)
	}
	for _, c := range []struct{ tool, lib, env string }{
		{"install_library", "bblanchon/ArduinoJson@^7.0.4", "esp32dev"},
		{"uninstall_library", "bblanchon/ArduinoJson", ""},
		{"update_library", "bblanchon/ArduinoJson", ""},
	} {
		var out pioResult
		decode(t, e.call(c.tool, map[string]any{"project_dir": proj, "library": c.lib, "env": c.env}), &out)
		if !out.OK || out.Verb != c.tool {
			t.Errorf("%s = %+v", c.tool, out)
		}
	}
	want := [][]string{
		{"pkg", "search", "type:library onewire"},
		{"pkg", "list", "-d", proj, "--only-libraries"},
		{"pkg", "install", "-d", proj, "-e", "esp32dev", "-l", "bblanchon/ArduinoJson@^7.0.4"},
		{"pkg", "uninstall", "-d", proj, "-l", "bblanchon/ArduinoJson"},
		{"pkg", "update", "-d", proj, "-l", "bblanchon/ArduinoJson"},
	}
	if got := r.Calls(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls = %q\nwant %q", got, want)
	}
}

func TestPIOInitAndConfig(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"boards_uno", "project_init"}}
	e, proj := pioEnv(t, r, "uno")
	dir := filepath.Join(filepath.Dir(proj), "blink")
	r.Dir = dir
	var out pioResult
	decode(t, e.call("init_project", map[string]any{"project_dir": "blink", "board": "uno", "framework": "arduino"}), &out)
	if !out.OK || !strings.Contains(out.Tail, "successfully initialized") {
		t.Errorf("init = %+v", out)
	}
	r2 := &piotest.Replay{Scenarios: []string{"project_config"}}
	e2, proj2 := pioEnv(t, r2, "esp32dev", "nucleo_f401re")
	var cfg configResult
	decode(t, e2.call("get_project_config", map[string]any{"project_dir": proj2}), &cfg)
	if fmt.Sprint(cfg.Envs) != "[esp32dev nucleo_f401re]" || len(cfg.Sections) != 4 {
		t.Fatalf("config = %+v", cfg)
	}
	lib := cfg.Sections[2].Options[3]
	if lib.Name != "lib_deps" || fmt.Sprint(lib.Values) != "[bblanchon/ArduinoJson@^7.0.4]" {
		t.Errorf("lib_deps = %+v", lib)
	}
}

func TestPIOLocksAndMonitor(t *testing.T) {
	e, _ := pioEnv(t, &piotest.Replay{})
	port := e.board.SerialPath()
	var l lockResult
	decode(t, e.call("acquire_lock", map[string]any{"port": port, "reason": "flashing by hand"}), &l)
	if !l.Held {
		t.Fatalf("lock = %+v", l)
	}
	other := e.connect("other-client")
	res := callWith(t, context.Background(), other, "acquire_lock", map[string]any{"port": port})
	if !res.IsError {
		t.Errorf("another session got the held port: %s", text(res))
	}
	e.call("release_lock", map[string]any{"port": port})
	res = callWith(t, context.Background(), other, "acquire_lock", map[string]any{"port": port})
	if res.IsError {
		t.Errorf("the released port: %s", text(res))
	}
	callWith(t, context.Background(), other, "release_lock", map[string]any{"port": port})

	var o openResult
	decode(t, e.call("start_monitor", map[string]any{"port": port, "baud_rate": 115200}), &o)
	var c closeResult
	decode(t, e.call("stop_monitor", map[string]any{"port": port}), &c)
	if !c.Closed || c.ConnectionID != o.ConnectionID {
		t.Errorf("stop_monitor = %+v after %+v", c, o)
	}
}

func TestPIOProgress(t *testing.T) {
	r := &piotest.Replay{Scenarios: []string{"test"}}
	e, proj := pioEnv(t, r, "uno")
	req := request("run_tests", map[string]any{"project_dir": proj, "env": "uno"})
	req.Params.Meta = &mcp.Meta{ProgressToken: "pio-1"}
	res, err := e.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var ps []mcp.JSONRPCNotification
	waitFor(t, "progress", func() bool { ps = e.notifications("notifications/progress"); return len(ps) >= 1 })
	if f := ps[0].Params.AdditionalFields; f["progressToken"] != "pio-1" {
		t.Errorf("token %v", f["progressToken"])
	}
}

// A port held with acquire_lock is released when its session ends, and
// while held another session's serial calls on it are busy.
func TestPIOLockSessionEnd(t *testing.T) {
	e, _ := pioEnv(t, &piotest.Replay{})
	port := e.board.SerialPath()
	id := e.open(nil)
	c2 := e.connect("second")
	if res := callWith(t, context.Background(), c2, "acquire_lock", map[string]any{"port": port, "reason": "flashing"}); res.IsError {
		t.Fatal(text(res))
	}
	if msg := e.callErr("serial_send", map[string]any{"console": id, "text": "echo x"}); !strings.HasPrefix(msg, "busy: ") || !strings.Contains(msg, "(flashing)") {
		t.Errorf("serial_send on a locked port: %s", msg)
	}
	c2.Close()
	waitFor(t, "the lock to end with its session", func() bool { return len(e.srv.leases.List()) == 0 })
	e.call("serial_send", map[string]any{"console": id, "text": "echo x"})
}

// A pio_test step in a sequence is checked like the pio verbs: its
// project under a root, with the environment it names.
func TestPIOTestStepOverMCP(t *testing.T) {
	e, proj := pioEnv(t, &piotest.Replay{}, "uno")
	msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"pio_test": map[string]any{"project_dir": proj, "env": "due"}}}})
	if !strings.Contains(msg, `pio_test: invalid PlatformIO request: project `+proj+` has no environment "due" (it has uno)`) {
		t.Errorf("unknown env: %s", msg)
	}
	msg = e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"pio_test": map[string]any{"project_dir": t.TempDir()}}}})
	if !strings.Contains(msg, "outside the --root folders") {
		t.Errorf("outside: %s", msg)
	}
}

// acquire_lock holds a port for ttl_ms (default 10 minutes, at most 24
// hours) unless renewed: a client that vanishes does not keep it.
func TestAcquireLockTTL(t *testing.T) {
	e, _ := pioEnv(t, &piotest.Replay{})
	port := e.board.SerialPath()
	now := time.Now()
	e.srv.leases.Now = func() time.Time { return now }
	var l lockResult
	decode(t, e.call("acquire_lock", map[string]any{"port": port}), &l)
	exp, err := time.Parse(time.RFC3339Nano, l.Expires)
	if err != nil || !exp.Equal(now.Add(10*time.Minute).UTC()) {
		t.Fatalf("default lock = %+v (%v)", l, err)
	}
	other := e.connect("other-client")
	now = now.Add(9 * time.Minute)
	decode(t, e.call("acquire_lock", map[string]any{"port": port, "ttl_ms": 60000}), &l) // renews
	now = now.Add(59 * time.Second)
	if res := callWith(t, context.Background(), other, "acquire_lock", map[string]any{"port": port}); !res.IsError {
		t.Fatalf("another session took the port before the lock lapsed: %s", text(res))
	}
	now = now.Add(time.Second)
	if res := callWith(t, context.Background(), other, "acquire_lock", map[string]any{"port": port}); res.IsError {
		t.Fatalf("the lapsed lock still holds the port: %s", text(res))
	}
	for _, ttl := range []int64{0, -1, 24*3600*1000 + 1} {
		if msg := e.callErr("acquire_lock", map[string]any{"port": port, "ttl_ms": ttl}); !strings.Contains(msg, "ttl_ms") {
			t.Errorf("ttl_ms %d: %s", ttl, msg)
		}
	}
}

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
)

func TestToolList(t *testing.T) {
	e := newEnv(t, envOptions{})
	res, err := e.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{"list_ports": true, "serial_read": true, "serial_expect": true, "validate_sequence": true, "serial_status": true, "mem_read": true, "task_status": true,
		"console_list": true, "serial_snapshot": true, "log_info": true, "log_search": true,
		"list_boards": true, "get_board_info": true, "list_devices": true, "system_info": true, "search_libraries": true,
		"get_project_config": true, "check_project": true, "list_installed_libraries": true}
	want := []string{"acquire_lock", "build", "check_project", "clean_project", "console_hold", "console_list", "console_release",
		"get_board_info", "get_project_config", "init_project", "install_library", "list_boards", "list_devices", "list_installed_libraries",
		"list_ports", "log_info", "log_search", "mem_read", "mem_write", "release_lock", "run_sequence", "run_tests", "search_libraries",
		"serial_close", "serial_expect", "serial_open", "serial_read", "serial_send", "serial_send_ctrl", "serial_sequence", "serial_snapshot",
		"serial_status", "serial_write", "start_monitor", "stop_monitor", "system_info", "task_cancel", "task_status", "uninstall_library",
		"update_library", "upload", "upload_filesystem", "validate_sequence"}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
		if tool.OutputSchema.Type != "object" {
			t.Errorf("%s: output schema type %q", tool.Name, tool.OutputSchema.Type)
		}
		a := tool.Annotations
		if a.Title == "" || a.ReadOnlyHint == nil || *a.ReadOnlyHint != readOnly[tool.Name] {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tools %v", got)
	}
	for _, tool := range res.Tools {
		if tool.Name == "mem_write" && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Errorf("mem_write is not destructive")
		}
		if tool.Name == "serial_write" && (tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint) {
			t.Errorf("serial_write is destructive")
		}
		if tool.Name == "upload" && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Errorf("upload is not destructive")
		}
		if tool.Name == "build" && (tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint) {
			t.Errorf("build is destructive")
		}
	}
}

func TestSerialPrimitives(t *testing.T) {
	e := newEnv(t, envOptions{})
	var op openResult
	decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath(), "baud": 115200, "label": "board", "line_ending": "lf"}), &op)
	if op.ConnectionID != "c1" || op.LogResource != "hilrun://connections/c1/log" {
		t.Fatalf("%+v", op)
	}
	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath()}); !strings.Contains(msg, "already open as connection c1") {
		t.Errorf("second open: %s", msg)
	}
	e.call("serial_expect", map[string]any{"connection": "board", "pattern": "sim> ", "cursor": 0})

	// Cursor 0 is the start of the retained buffer; a read without a
	// cursor continues where the last read or expect ended.
	var rd readResult
	decode(t, e.call("serial_read", map[string]any{"connection": "c1", "cursor": 0}), &rd)
	if !strings.Contains(rd.Data, "hilrun virtual board") || rd.Start != 0 || rd.Cursor != int64(len(rd.Data)) {
		t.Errorf("first read: %+v", rd)
	}
	var again readResult
	decode(t, e.call("serial_read", map[string]any{"connection": "c1"}), &again)
	if again.Bytes != 0 || again.Start != rd.Cursor {
		t.Errorf("second read: %+v", again)
	}
	// Write, then expect its reply by cursor, with groups.
	var w writeResult
	decode(t, e.call("serial_write", map[string]any{"connection_id": "c1", "data": "version", "newline": true}), &w)
	if w.Bytes != 8 || w.Cursor != rd.Cursor {
		t.Errorf("write: %+v after read %+v", w, rd)
	}
	var ex expectResult
	decode(t, e.call("serial_expect", map[string]any{"connection": "c1", "pattern": `hilrun-sim (\d+)\.(\d+)`, "regex": true, "cursor": w.Cursor}), &ex)
	if !ex.Matched || ex.Match != "hilrun-sim 1.0" || len(ex.Groups) != 2 || ex.Groups[0] != "1" {
		t.Errorf("expect: %+v", ex)
	}
	// A timed-out expect says so and returns the cursor it was given.
	decode(t, e.call("serial_expect", map[string]any{"connection": "c1", "pattern": "nothing like this", "timeout_ms": 100, "cursor": w.Cursor}), &ex)
	if ex.Matched || !ex.TimedOut || ex.Cursor != w.Cursor || !strings.Contains(ex.Data, "hilrun-sim") {
		t.Errorf("timed-out expect: %+v", ex)
	}
	// Hex encoding both ways and a control key.
	decode(t, e.call("serial_write", map[string]any{"connection": "c1", "data": "65 63 68 6f 20 68 78 0a", "encoding": "hex"}), &w)
	decode(t, e.call("serial_expect", map[string]any{"connection": "c1", "pattern": "hx\r\n", "cursor": w.Cursor, "encoding": "hex"}), &ex)
	if !ex.Matched || !strings.HasSuffix(ex.Data, "68 78 0d 0a") {
		t.Errorf("hex expect: %+v", ex)
	}
	decode(t, e.call("serial_write", map[string]any{"connection": "c1", "ctrl": "c"}), &w)
	if w.Bytes != 1 {
		t.Errorf("ctrl write %+v", w)
	}
	// A capture window: stream prints for a while; the window ends on idle.
	decode(t, e.call("serial_write", map[string]any{"connection": "c1", "data": "stream 5", "newline": "lf"}), &w)
	decode(t, e.call("serial_read", map[string]any{"connection": "c1", "cursor": w.Cursor, "duration_ms": 60000, "idle_timeout_ms": 300, "start_trigger": "first_byte", "encoding": "base64"}), &rd)
	if rd.Reason != "idle" || rd.Bytes == 0 || rd.Encoding != "base64" {
		t.Errorf("capture: %+v", rd)
	}
	// Nothing arrives once the prompt is back: initial_timeout_ms ends the
	// window with no_data.
	decode(t, e.call("serial_expect", map[string]any{"connection": "c1", "pattern": "sim> ", "cursor": w.Cursor, "timeout_ms": 20000}), &ex)
	if !ex.Matched {
		t.Fatalf("the prompt after stream: %+v", ex)
	}
	decode(t, e.call("serial_read", map[string]any{"connection": "c1", "duration_ms": 2000, "initial_timeout_ms": 100}), &rd)
	if rd.Reason != "no_data" || rd.Bytes != 0 {
		t.Errorf("quiet capture: %+v", rd)
	}
	// timeout_ms waits for a first byte.
	decode(t, e.call("serial_read", map[string]any{"connection": "c1", "timeout_ms": 100}), &rd)
	if rd.Reason != "timeout" && rd.Reason != "data" {
		t.Errorf("read with timeout: %+v", rd)
	}
	var st statusResult
	decode(t, e.call("serial_status", map[string]any{"connection": "board"}), &st)
	c := st.Connections[0]
	if c.ConnectionID != "c1" || c.Label != "board" || !c.Connected || c.TxBytes == 0 || c.RxBytes == 0 || c.Log == "" {
		t.Errorf("status: %+v", c)
	}
	var cl closeResult
	decode(t, e.call("serial_close", map[string]any{"connection": "c1"}), &cl)
	if !cl.Closed {
		t.Errorf("close: %+v", cl)
	}
	decode(t, e.call("serial_status", nil), &st)
	if len(st.Connections) != 0 {
		t.Errorf("status after close: %+v", st)
	}
	if msg := e.callErr("serial_write", map[string]any{"data": "x"}); !strings.Contains(msg, "no connection is open") {
		t.Errorf("write with nothing open: %s", msg)
	}
}

func TestListPortsAndPortPolicy(t *testing.T) {
	fake := []serialx.PortInfo{
		{Path: "/dev/ttyACM0", IsUSB: true, VID: "0483", PID: "374b", SerialNumber: "0671FF", Product: "STM32 STLink"},
		{Path: "/dev/ttyUSB0", IsUSB: true, VID: "10c4", PID: "ea60"},
		{Path: "/dev/ttyS0"},
		{Path: "/dev/ttyACM10", IsUSB: true, VID: "1366", PID: "0105"},
	}
	for _, tc := range []struct {
		name         string
		allow, deny  []string
		want         string
		hidden       int
		openRefused  bool
		refusedMatch string
	}{
		{name: "no policy", want: "/dev/ttyACM0 /dev/ttyACM10 /dev/ttyS0 /dev/ttyUSB0"},
		{name: "deny", deny: []string{"/dev/ttyS*"}, want: "/dev/ttyACM0 /dev/ttyACM10 /dev/ttyUSB0", hidden: 1},
		{name: "allow is a glob, not a substring", allow: []string{"/dev/ttyACM?"}, want: "/dev/ttyACM0", hidden: 3, openRefused: true, refusedMatch: "matches no --allow-port"},
		{name: "deny wins", allow: []string{"/dev/tty*"}, deny: []string{"/dev/ttyACM*", "/dev/pts/*"}, want: "/dev/ttyS0 /dev/ttyUSB0", hidden: 2, openRefused: true, refusedMatch: "matches --deny-port /dev/pts/*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{config: func(c *Config) {
				c.ListPorts = func() ([]serialx.PortInfo, error) { return fake, nil }
				c.Policy.AllowPorts, c.Policy.DenyPorts = tc.allow, tc.deny
			}})
			var out listPortsResult
			decode(t, e.call("list_ports", nil), &out)
			var paths []string
			for _, p := range out.Ports {
				paths = append(paths, p.Path)
			}
			if sortJoin(paths) != tc.want || out.Hidden != tc.hidden {
				t.Errorf("ports %v hidden %d", paths, out.Hidden)
			}
			for _, p := range out.Ports {
				switch p.Path {
				case "/dev/ttyACM0":
					if p.VIDPID != "0483:374b" || !strings.Contains(p.Board, "ST-Link") || p.SerialNumber != "0671FF" {
						t.Errorf("%+v", p)
					}
				case "/dev/ttyUSB0":
					if !strings.Contains(p.Board, "CP210x") {
						t.Errorf("%+v", p)
					}
				case "/dev/ttyACM10":
					if !strings.Contains(p.Board, "J-Link") {
						t.Errorf("%+v", p)
					}
				}
			}
			// The virtual board's pty is /dev/pts/N.
			res := callWith(t, context.Background(), e.c, "serial_open", map[string]any{"port": e.board.SerialPath()})
			if res.IsError != tc.openRefused {
				t.Fatalf("open: %s", text(res))
			}
			if tc.openRefused {
				if !strings.Contains(text(res), tc.refusedMatch) {
					t.Errorf("refusal: %s", text(res))
				}
				seq := callWith(t, context.Background(), e.c, "serial_sequence", map[string]any{"steps": []any{map[string]any{"send": "x", "to": e.board.SerialPath()}}})
				if !seq.IsError || !strings.Contains(text(seq), tc.refusedMatch) {
					t.Errorf("sequence on a refused port: %s", text(seq))
				}
			}
		})
	}
}

func sortJoin(s []string) string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return strings.Join(c, " ")
}

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMemoryTools(t *testing.T) {
	for _, real := range []bool{false, true} {
		name := "stand-in"
		if real {
			name = "openocd"
		}
		t.Run(name, func(t *testing.T) {
			fw := filepath.Dir(repoFile(t, "firmware/sim/sim.elf"))
			e := newEnv(t, envOptions{sim: true, realOpenOCD: real, config: func(c *Config) { c.Policy.Roots = []string{fw} }})
			var m memResult
			decode(t, e.call("mem_write", map[string]any{"probe": "yellow", "address": "0x48000018", "value": "0x20", "verify": false}), &m)
			decode(t, e.call("mem_read", map[string]any{"probe": "yellow", "address": 0x48000014, "count": 2}), &m)
			if m.Hex[0] != "0x00000020" || m.Count != 2 || m.Address != "0x48000014" {
				t.Errorf("read: %+v", m)
			}
			if !e.board.LED() {
				t.Errorf("the LED is off after writing BSRR")
			}
			decode(t, e.call("mem_write", map[string]any{"symbol": "blink", "elf": "sim.elf", "value": 1, "verify": true}), &m)
			if !m.Verified || m.Symbol != "blink" {
				t.Errorf("symbol write: %+v", m)
			}
			decode(t, e.call("mem_read", map[string]any{"symbol": "blink", "elf_path": filepath.Join(fw, "sim.elf")}), &m)
			if m.Values[0] != 1 {
				t.Errorf("symbol read: %+v", m)
			}
			if msg := e.callErr("mem_read", map[string]any{"address": "0x30000000"}); !strings.Contains(msg, "0x30000000") {
				t.Errorf("bus fault: %s", msg)
			}
			// Width 64, as advertised: OpenOCD has no 64-bit accesses on
			// the board's 32-bit bus, so hilrun makes them of two words.
			decode(t, e.call("mem_write", map[string]any{"address": "0x20000400", "width": 64, "values": []any{"0x1122334455667788", "0xffffffff00000000"}, "verify": true}), &m)
			if !m.Verified {
				t.Errorf("64-bit write: %+v", m)
			}
			decode(t, e.call("mem_read", map[string]any{"address": "0x20000400", "width": 64, "count": 2}), &m)
			if strings.Join(m.Hex, " ") != "0x1122334455667788 0xffffffff00000000" || m.Width != 64 {
				t.Errorf("64-bit read: %+v", m)
			}
			decode(t, e.call("mem_read", map[string]any{"address": "0x20000400", "count": 4}), &m)
			if strings.Join(m.Hex, " ") != "0x55667788 0x11223344 0x00000000 0xffffffff" {
				t.Errorf("the 64-bit values as 32-bit words: %+v", m)
			}
			// Memory steps in a sequence share the pooled session.
			out := e.sequence(map[string]any{"steps": []any{
				map[string]any{"mem_write": true, "address": "0x48000018", "value": "0x200000", "probe": "yellow"},
				map[string]any{"mem_read": true, "address": "0x48000014", "probe": "yellow", "expect": 0, "label": "odr"},
				map[string]any{"mem_read": true, "symbol": "blink", "elf_path": "sim.elf", "probe": "yellow"},
			}})
			if !out.Passed {
				t.Errorf("sequence: %s %v", statuses(out), out.Steps)
			}
		})
	}
}

func TestMemoryPolicy(t *testing.T) {
	t.Run("read-only", func(t *testing.T) {
		e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.ReadOnly = true }})
		if msg := e.callErr("mem_write", map[string]any{"address": "0x20000000", "value": 1}); !strings.Contains(msg, "read-only") {
			t.Errorf("mem_write: %s", msg)
		}
		e.call("mem_read", map[string]any{"address": "0x20000000"})
		msg := e.callErr("serial_sequence", map[string]any{"steps": []any{
			map[string]any{"send": "version"},
			map[string]any{"group": "g", "steps": []any{map[string]any{"mem_write": true, "address": "0x20000000", "value": 1}}},
		}})
		if !strings.Contains(msg, "serial_sequence: /steps/1/steps/0: mem_write") || !strings.Contains(msg, "read-only") {
			t.Errorf("sequence: %s", msg)
		}
		if msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"openocd": "mww 0x20000000 1"}}}); !strings.Contains(msg, "read-only") {
			t.Errorf("openocd step: %s", msg)
		}
		// Serial writes stay allowed.
		out := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "echo still", "expect": "still"}, map[string]any{"halt": true}, map[string]any{"resume": true}}})
		if !out.Passed {
			t.Errorf("%s", statuses(out))
		}
	})
	t.Run("allow-mem-write", func(t *testing.T) {
		r1, _ := ParseMemRange("0x48000000+0x400")
		r2, _ := ParseMemRange("0x20000000-0x20000fff")
		e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.MemWrite = []MemRange{r1, r2} }})
		e.call("mem_write", map[string]any{"address": "0x48000018", "value": "0x20"})
		e.call("mem_write", map[string]any{"address": "0x20000ffc", "value": 7})
		if msg := e.callErr("mem_write", map[string]any{"address": "0x20000ffe", "value": 7}); !strings.Contains(msg, "--allow-mem-write") {
			t.Errorf("write across the end: %s", msg)
		}
		if msg := e.callErr("mem_write", map[string]any{"address": "0x20001000", "values": []any{1, 2}}); !strings.Contains(msg, "outside") {
			t.Errorf("write outside: %s", msg)
		}
		// In a sequence the address may be computed: the write is refused
		// when it runs, which ends the sequence (finally steps still run).
		out := e.sequence(map[string]any{"vars": map[string]any{"base": "0x20002000"}, "steps": []any{
			map[string]any{"mem_write": true, "address": "0x20000010", "value": 1},
			map[string]any{"mem_write": true, "address": "num(base)", "value": 1},
		}, "finally": []any{map[string]any{"mem_write": true, "address": "0x48000018", "value": "0x20"}}})
		if statuses(out) != "0:passed 1:error finally.0:passed" || !strings.Contains(out.Steps[1].Message, "allow-mem-write") {
			t.Errorf("sequence: %s %q", statuses(out), out.Steps[1].Message)
		}
	})
	for _, tc := range []struct {
		in      string
		want    MemRange
		wantErr bool
	}{
		{in: "0x20000000-0x2000ffff", want: MemRange{0x20000000, 0x2000ffff}},
		{in: "0x48000000+0x400", want: MemRange{0x48000000, 0x480003ff}},
		{in: "4096+16", want: MemRange{4096, 4111}},
		{in: "0x10-0x1", wantErr: true},
		{in: "0x10", wantErr: true},
		{in: "0x10+0", wantErr: true},
	} {
		got, err := ParseMemRange(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParseMemRange(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestRoots(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	seq := "steps:\n  - send: echo from-file\n    expect: from-file\n"
	os.WriteFile(filepath.Join(root, "ok.yaml"), []byte(seq), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte(seq), 0o644)
	os.Mkdir(filepath.Join(root, "sub"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(root, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "sub", "dir")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root} }})
	var out sequenceResult
	decode(t, e.call("run_sequence", map[string]any{"path": "ok.yaml"}), &out)
	if !out.Passed || out.Name != "ok" {
		t.Errorf("run_sequence: %+v", out)
	}
	decode(t, e.call("run_sequence", map[string]any{"path": filepath.Join(root, "sub", "..", "ok.yaml")}), &out)
	for _, p := range []string{
		"../" + filepath.Base(outside) + "/secret.yaml",
		filepath.Join(root, "..", filepath.Base(outside), "secret.yaml"),
		filepath.Join(outside, "secret.yaml"),
		"link.yaml",
		"sub/dir/secret.yaml",
	} {
		for _, tool := range []string{"run_sequence", "validate_sequence"} {
			if msg := e.callErr(tool, map[string]any{"path": p}); !strings.Contains(msg, "outside the --root folders") {
				t.Errorf("%s %s: %s", tool, p, msg)
			}
		}
	}
	var v validateResult
	decode(t, e.call("validate_sequence", map[string]any{"path": "ok.yaml"}), &v)
	if !v.Valid {
		t.Errorf("%+v", v)
	}
	// No root: no file at all.
	e2 := newEnv(t, envOptions{sim: true})
	if msg := e2.callErr("run_sequence", map[string]any{"path": filepath.Join(root, "ok.yaml")}); !strings.Contains(msg, "no --root") {
		t.Errorf("%s", msg)
	}
}

func TestHTTP(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	h, err := e.srv.ListenHTTP("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"token", "Bearer " + testToken, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", h.URL(), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}

	c, err := client.NewStreamableHttpClient(h.URL(), transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "http-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res := callWith(t, ctx, c, "serial_sequence", map[string]any{"steps": `[{"send": "echo over-http", "expect": "over-http"}]`})
	var out sequenceResult
	decode(t, res, &out)
	if res.IsError || !out.Passed {
		t.Errorf("%s", text(res))
	}

	t.Run("address in use", func(t *testing.T) {
		_, err := e.srv.ListenHTTP(h.Addr(), "")
		if err == nil || !strings.Contains(err.Error(), "listen on "+h.Addr()) {
			t.Errorf("second bind: %v", err)
		}
	})
	t.Run("non-loopback needs a token", func(t *testing.T) {
		for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:4123"} {
			_, err := e.srv.ListenHTTP(addr, "")
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "HILRUN_MCP_TOKEN") {
				t.Errorf("%s: %v", addr, err)
			}
		}
		h2, err := e.srv.ListenHTTP("0.0.0.0:0", testToken)
		if err != nil {
			t.Fatalf("with a token: %v", err)
		}
		h2.Close()
	})
}

func TestHTTPCancelOnDisconnect(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	h, err := e.srv.ListenHTTP("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Serve(ctx)
	c, err := client.NewStreamableHttpClient(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Start(ctx)
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	called := make(chan struct{})
	go func() {
		defer close(called)
		c.CallTool(callCtx, request("serial_sequence", map[string]any{
			"steps":   []any{map[string]any{"send": "echo started"}, map[string]any{"delay_ms": 120000}},
			"finally": []any{map[string]any{"send": "echo cleaned-up", "expect": "cleaned-up", "read_timeout": 20}},
		}))
	}()
	// The client goes away once the run talks to the board, so has its
	// console open.
	waitFor(t, "the run to send", func() bool {
		for _, l := range e.board.Received() {
			if l.Line == "echo started" {
				return true
			}
		}
		return false
	})
	stop()
	<-called
	// The client went away: the run stops, runs finally and frees the port.
	waitFor(t, "the run to end", func() bool { return e.srv.runs.find("r1") != nil })
	rep := readResource(t, e, runReportURI("r1"))
	if !strings.Contains(rep, `"path": "finally.0"`) || !strings.Contains(rep, `"status": "passed"`) {
		t.Errorf("report: %s", rep)
	}
}

func TestStdio(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(ctx, inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(m string) {
		if _, err := io.WriteString(inW, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		if !lines.Scan() {
			t.Fatalf("stdout ended: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout carried a line that is not JSON-RPC: %q", lines.Text())
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-test","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"serial_sequence","_meta":{"progressToken":7},"arguments":{"steps":[{"send":"echo via-stdio","expect":"via-stdio"},{"delay_ms":60}]}}}`)
	for {
		m := recv()
		if m["id"] != nil {
			res := m["result"].(map[string]any)
			if res["isError"] == true || !strings.Contains(res["content"].([]any)[0].(map[string]any)["text"].(string), "passed 2/2") {
				t.Errorf("result: %v", res)
			}
			break
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not end with its input")
	}
	if !strings.Contains(e.log.String(), "serving MCP on standard input and output") {
		t.Errorf("log: %q", e.log.String())
	}
}

func TestLocker(t *testing.T) {
	l := newLocker()
	rel, err := l.acquire(context.Background(), []string{"port a", "probe p"}, "one", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.acquire(context.Background(), []string{"probe p"}, "two", 0)
	var be *BusyError
	if !errors.As(err, &be) || be.Holder != "one" || !errors.Is(err, ErrBusy) {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.acquire(ctx, []string{"port a"}, "three", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled wait: %v", err)
	}
	go func() { time.Sleep(30 * time.Millisecond); rel(); rel() }()
	rel2, err := l.acquire(context.Background(), []string{"port a", "port a"}, "four", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rel2()
}

func TestNoEscapeThroughSequences(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "launch.yaml"), []byte("probes:\n  p:\n    launch: {binary: /bin/sh, config: [x.cfg]}\nsteps:\n  - halt: true\n"), 0o644)
	t.Setenv("HILRUN_TEST_SECRET", "hunter2")
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root} }})
	if msg := e.callErr("run_sequence", map[string]any{"path": "launch.yaml"}); !strings.Contains(msg, "only taken from the server's --bench file") {
		t.Errorf("launch binary: %s", msg)
	}
	if msg := e.callErr("serial_sequence", map[string]any{"steps": map[string]any{
		"probes": map[string]any{"p": map[string]any{"openocd": "10.0.0.1:4444"}},
		"steps":  []any{map[string]any{"halt": true, "probe": "p"}},
	}}); !strings.Contains(msg, "probes section is not accepted") {
		t.Errorf("inline probes: %s", msg)
	}
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"send": "echo [${env.HILRUN_TEST_SECRET}]", "expect": "[]"},
	}})
	if !out.Passed {
		t.Errorf("the environment leaked: %s %v", statuses(out), out.Steps)
	}
}

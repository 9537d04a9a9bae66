package mcpserver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
)

// received reports whether the board received line.
func (e *env) received(line string) bool {
	for _, l := range e.board.Received() {
		if l.Line == line {
			return true
		}
	}
	return false
}

func TestSerialSendSubmitsTheLine(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	var w writeResult
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "echo hello"}), &w)
	if w.Bytes != len("echo hello\n") {
		t.Errorf("bytes = %d, want the text and its line ending", w.Bytes)
	}
	var x expectResult
	decode(t, e.call("serial_expect", map[string]any{"console": id, "pattern": "hello\r\nsim> ", "cursor": w.Cursor, "timeout_ms": 20000}), &x)
	if !x.Matched {
		t.Fatalf("no reply to serial_send: %+v", x)
	}
	if !e.received("echo hello") {
		t.Errorf("the board did not receive the line: %v", e.board.Received())
	}

	// newline: false sends the text alone; the board runs nothing until
	// the line ends.
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "echo part", "newline": false}), &w)
	if w.Bytes != len("echo part") {
		t.Errorf("bytes = %d with newline false", w.Bytes)
	}
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "ial"}), &w)
	decode(t, e.call("serial_expect", map[string]any{"console": id, "pattern": "partial\r\nsim> ", "cursor": w.Cursor, "timeout_ms": 20000}), &x)
	if !x.Matched || !e.received("echo partial") || e.received("echo part") {
		t.Errorf("newline false then true: %+v, board received %v", x, e.board.Received())
	}
	if msg := e.callErr("serial_send", map[string]any{"console": id, "newline": false}); !strings.Contains(msg, "nothing to send") {
		t.Errorf("empty send: %s", msg)
	}
}

func TestSerialSendCtrl(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	var w writeResult
	decode(t, e.call("serial_send_ctrl", map[string]any{"console": id, "ctrl": "c"}), &w)
	if w.Bytes != 1 {
		t.Errorf("bytes = %d", w.Bytes)
	}
	e.call("serial_expect", map[string]any{"console": id, "pattern": "^C", "cursor": w.Cursor, "timeout_ms": 20000})
	if msg := e.callErr("serial_send_ctrl", map[string]any{"console": id, "ctrl": "cc"}); !strings.Contains(msg, `ctrl "cc"`) {
		t.Errorf("bad ctrl: %s", msg)
	}
	if msg := e.callErr("serial_send_ctrl", map[string]any{"console": id}); !strings.Contains(msg, "ctrl is required") {
		t.Errorf("missing ctrl: %s", msg)
	}
}

func TestSerialSnapshot(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	var w writeResult
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "echo one; echo two; echo three"}), &w)
	e.call("serial_expect", map[string]any{"console": id, "pattern": "three\r\nsim> ", "cursor": w.Cursor, "timeout_ms": 20000})
	var before, after statusResult
	decode(t, e.call("serial_status", map[string]any{"console": id}), &before)
	var snap snapshotResult
	decode(t, e.call("serial_snapshot", map[string]any{"console": id, "lines": 3}), &snap)
	if snap.Text != "two\r\nthree\r\nsim> " || snap.Lines != 3 {
		t.Errorf("snapshot = %q (%d lines)", snap.Text, snap.Lines)
	}
	if snap.Cursor-snap.Start != int64(len(snap.Text)) {
		t.Errorf("start %d, cursor %d for %d bytes", snap.Start, snap.Cursor, len(snap.Text))
	}
	// The snapshot does not move serial_read's cursor.
	decode(t, e.call("serial_status", map[string]any{"console": id}), &after)
	if after.Connections[0].ReadCursor != before.Connections[0].ReadCursor {
		t.Errorf("read_cursor %d after the snapshot, %d before", after.Connections[0].ReadCursor, before.Connections[0].ReadCursor)
	}
	decode(t, e.call("serial_snapshot", map[string]any{"connection": id}), &snap)
	if !strings.HasSuffix(snap.Text, "three\r\nsim> ") || snap.Lines > defaultSnapshotLines {
		t.Errorf("default snapshot = %q (%d lines)", snap.Text, snap.Lines)
	}
	if msg := e.callErr("serial_snapshot", map[string]any{"console": id, "lines": 0}); !strings.Contains(msg, "lines must be from 1") {
		t.Errorf("lines 0: %s", msg)
	}
}

// console names a connection wherever connection does, and a call naming
// two different ones is refused.
func TestConsoleAlias(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(map[string]any{"label": "dut"})
	var st statusResult
	decode(t, e.call("serial_status", map[string]any{"console": "dut"}), &st)
	if len(st.Connections) != 1 || st.Connections[0].ConnectionID != id {
		t.Errorf("serial_status by console = %+v", st)
	}
	var w writeResult
	decode(t, e.call("serial_write", map[string]any{"console": e.board.SerialPath(), "data": "echo aliased\n"}), &w)
	var x expectResult
	decode(t, e.call("serial_expect", map[string]any{"console": id, "pattern": "aliased\r\n", "cursor": w.Cursor, "timeout_ms": 20000}), &x)
	var r readResult
	decode(t, e.call("serial_read", map[string]any{"console": id, "cursor": w.Cursor}), &r)
	if !strings.Contains(r.Data, "aliased") {
		t.Errorf("serial_read by console = %+v", r)
	}
	decode(t, e.call("serial_expect", map[string]any{"console": "dut", "connection": "dut", "pattern": "sim> ", "cursor": w.Cursor, "timeout_ms": 20000}), &x)
	if msg := e.callErr("serial_read", map[string]any{"console": "dut", "connection": "c9"}); !strings.Contains(msg, "console and connection name different connections") {
		t.Errorf("two names: %s", msg)
	}
	if msg := e.callErr("serial_write", map[string]any{"console": "nope", "data": "x"}); !strings.Contains(msg, `no connection "nope"`) {
		t.Errorf("unknown console: %s", msg)
	}
	res, err := e.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		_, hasConn := tool.InputSchema.Properties["connection"]
		_, hasConsole := tool.InputSchema.Properties["console"]
		if hasConn != hasConsole {
			t.Errorf("%s: connection %v, console %v", tool.Name, hasConn, hasConsole)
		}
	}
	decode(t, e.call("serial_close", map[string]any{"console": "dut"}), &struct{}{})
}

func TestSerialOpenSeedArguments(t *testing.T) {
	e := newEnv(t, envOptions{})
	var o openResult
	decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath(), "baud_rate": 115200, "data_bits": "8", "stop_bits": "1", "parity": "none", "flow_control": "none"}), &o)
	e.call("serial_close", map[string]any{"connection": o.ConnectionID})
	for _, flow := range []string{"software", "hardware"} {
		decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath(), "data_bits": 8, "flow_control": flow}), &o)
		e.call("serial_close", map[string]any{"connection": o.ConnectionID})
	}
	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath(), "data_bits": "9"}); !strings.Contains(msg, "invalid data bits 9") {
		t.Errorf("data_bits 9: %s", msg)
	}
	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath(), "data_bits": "eight"}); !strings.Contains(msg, "string of digits") {
		t.Errorf("data_bits eight: %s", msg)
	}
	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath(), "flow_control": "sideways"}); !strings.Contains(msg, "hardware and software are accepted") {
		t.Errorf("flow_control sideways: %s", msg)
	}
}

func TestConsoleListAndLogInfo(t *testing.T) {
	e := newEnv(t, envOptions{})
	var cl consoleListResult
	decode(t, e.call("console_list", nil), &cl)
	if len(cl.Consoles) != 0 {
		t.Errorf("console_list with none open = %+v", cl)
	}
	id := e.open(map[string]any{"label": "dut"})
	board2 := sim.New(sim.Options{})
	if err := board2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { board2.Close() })
	id2 := e.open(map[string]any{"port": board2.SerialPath()})
	decode(t, e.call("console_list", nil), &cl)
	if len(cl.Consoles) != 2 || cl.Consoles[0].ConnectionID != id || cl.Consoles[0].Label != "dut" || cl.Consoles[1].ConnectionID != id2 {
		t.Fatalf("console_list = %+v", cl)
	}
	c := cl.Consoles[0]
	if !c.Connected || c.Released || c.Cursor == 0 || c.Log == "" || c.LeaseOwner != "" || len(c.Gaps) != 0 {
		t.Errorf("console = %+v", c)
	}
	// With two consoles, naming one is required.
	if msg := e.callErr("log_info", nil); !strings.Contains(msg, "several connections are open") {
		t.Errorf("log_info without a name: %s", msg)
	}
	var li logInfoResult
	decode(t, e.call("log_info", map[string]any{"console": "dut"}), &li)
	b, err := os.ReadFile(li.Path)
	if err != nil || !strings.Contains(string(b), "sim> ") || li.Bytes != int64(len(b)) {
		t.Errorf("log %s: %q, %v; log_info %+v", li.Path, b, err, li)
	}
	if _, err := time.Parse(time.RFC3339Nano, li.Started); err != nil || li.Timeline == "" || li.LogResource != connLogURI(id) {
		t.Errorf("log_info = %+v", li)
	}
}

func TestLogSearch(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	var w writeResult
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "echo alpha 1; echo beta; echo alpha 2; echo gamma"}), &w)
	e.call("serial_expect", map[string]any{"console": id, "pattern": "gamma\r\nsim> ", "cursor": w.Cursor, "timeout_ms": 20000})

	var r logSearchResult
	decode(t, e.call("log_search", map[string]any{"console": id, "pattern": "alpha", "context": 1}), &r)
	// A line of the log is what came between two line ends: the first
	// reply follows the prompt.
	if len(r.Matches) != 2 || r.Truncated || r.FilesSearched != 1 {
		t.Fatalf("log_search = %+v", r)
	}
	newest, older := r.Matches[0], r.Matches[1]
	if newest.Text != "alpha 2" || older.Text != "sim> alpha 1" || newest.Line != older.Line+2 {
		t.Errorf("matches = %+v", r.Matches)
	}
	if len(newest.Before) != 1 || newest.Before[0] != "beta" || len(newest.After) != 1 || newest.After[0] != "gamma" {
		t.Errorf("context of the newest = %q / %q", newest.Before, newest.After)
	}
	// The offset is the cursor of the line: serial_read from it returns it.
	var rd readResult
	decode(t, e.call("serial_read", map[string]any{"console": id, "cursor": newest.Offset, "max_bytes": len("alpha 2")}), &rd)
	if rd.Data != "alpha 2" {
		t.Errorf("read at the match's offset = %q", rd.Data)
	}

	decode(t, e.call("log_search", map[string]any{"console": id, "pattern": `alpha \d$`, "regex": true, "max_results": 1}), &r)
	if len(r.Matches) != 1 || r.Matches[0].Text != "alpha 2" || !r.Truncated || len(r.Matches[0].Before) != 0 {
		t.Errorf("regex, max_results 1 = %+v", r)
	}
	decode(t, e.call("log_search", map[string]any{"console": id, "pattern": "delta", "days": 1}), &r)
	if len(r.Matches) != 0 || r.Truncated {
		t.Errorf("no match = %+v", r)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"console": id, "pattern": ""}, "pattern is required"},
		{map[string]any{"console": id, "pattern": "(", "regex": true}, "pattern: "},
		{map[string]any{"console": id, "pattern": "a", "max_results": 0}, "max_results must be from 1"},
		{map[string]any{"console": id, "pattern": "a", "context": 21}, "context must be from 0 to 20"},
		{map[string]any{"console": id, "pattern": "a", "days": 0}, "days must be 1 or more"},
	} {
		if msg := e.callErr("log_search", c.args); !strings.Contains(msg, c.want) {
			t.Errorf("log_search %v: %s, want %q", c.args, msg, c.want)
		}
	}
}

// searchLog keeps its bounds: lines longer than it looks at, and more
// matches than it keeps.
func TestSearchLogBounds(t *testing.T) {
	path := t.TempDir() + "/x.log"
	long := strings.Repeat("x", maxSearchLine+100) + "needle-after-the-cut\n"
	data := long + strings.Repeat("needle\n", maxSearchResults+5) + "tail needle"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, truncated, err := searchLog(context.Background(), files.Anywhere(), path, func(b []byte) bool { return strings.Contains(string(b), "needle") }, maxSearchResults, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != maxSearchResults || !truncated {
		t.Fatalf("%d matches, truncated %v", len(ms), truncated)
	}
	if ms[0].Text != "tail needle" || ms[0].Line != maxSearchResults+7 {
		t.Errorf("newest = %+v", ms[0])
	}
	if ms[1].Offset != int64(len(long))+int64(maxSearchResults+4)*7 {
		t.Errorf("offset of the last full line = %d", ms[1].Offset)
	}
	ms, _, _ = searchLog(context.Background(), files.Anywhere(), path, func(b []byte) bool { return strings.Contains(string(b), "after-the-cut") }, 10, 0)
	if len(ms) != 0 {
		t.Errorf("matched past the cut of a long line: %d", len(ms))
	}
}

// openAsOther opens the board's port as another program would (a flasher,
// picocom): the tty, in exclusive mode, with flock on it.
func openAsOther(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("another program cannot open %s: %v", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		t.Fatalf("flock %s: %v", path, err)
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.TIOCEXCL, 0); err != nil {
		f.Close()
		t.Fatalf("TIOCEXCL %s: %v", path, err)
	}
	return f
}

// flocked reports whether an open description holds flock on port, which
// is how hilrun locks the board's pty while a console has it.
func flocked(t *testing.T, port string) bool {
	t.Helper()
	f, err := os.OpenFile(port, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err != nil && !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatalf("flock %s: %v", port, err)
	}
	return err != nil
}

func closeAsOther(f *os.File) {
	unix.IoctlSetInt(int(f.Fd()), unix.TIOCNXCL, 0)
	f.Close()
}

// readUntil reads f until what it read contains want.
func readUntil(t *testing.T, f *os.File, want string) string {
	t.Helper()
	var got []byte
	for !strings.Contains(string(got), want) {
		b := make([]byte, 256)
		n, err := f.Read(b)
		if err != nil {
			t.Fatalf("read %q, then %v", got, err)
		}
		got = append(got, b[:n]...)
	}
	return string(got)
}

func TestConsoleReleaseAndHold(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	port := e.board.SerialPath()
	stop := func() int64 {
		var c consoleListResult
		decode(t, e.call("console_list", nil), &c)
		return c.Consoles[0].Cursor
	}()

	if !flocked(t, port) {
		t.Fatalf("%s is not locked while the console has it", port)
	}
	var ci consoleInfo
	decode(t, e.call("console_release", map[string]any{"console": id}), &ci)
	if flocked(t, port) {
		t.Errorf("%s stays locked after console_release", port)
	}
	if !ci.Released || ci.Connected || ci.LeaseState != "released" || ci.LeaseOwner == "" || ci.Cursor != stop {
		t.Fatalf("console_release = %+v", ci)
	}
	var st statusResult
	decode(t, e.call("serial_status", map[string]any{"console": id}), &st)
	if !st.Connections[0].Released || st.Connections[0].Connected {
		t.Errorf("serial_status while released = %+v", st.Connections[0])
	}
	if msg := e.callErr("serial_send", map[string]any{"console": id, "text": "echo lost"}); !strings.Contains(msg, "released") {
		t.Errorf("serial_send while released: %s", msg)
	}

	// Another program opens the port and talks to the board.
	other := openAsOther(t, port)
	if _, err := other.Write([]byte("echo theirs\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, other, "theirs\r\nsim> ")

	// Another session may not take it back.
	c2 := e.connect("second")
	res := callWith(t, context.Background(), c2, "console_hold", map[string]any{"console": id})
	if !res.IsError || !strings.Contains(text(res), "only that session may release or hold its console") {
		t.Errorf("console_hold by another session: %s", text(res))
	}
	closeAsOther(other)

	ci = consoleInfo{}
	decode(t, e.call("console_hold", map[string]any{"console": id}), &ci)
	if ci.Released || !ci.Connected || ci.LeaseOwner != "" || ci.Cursor != stop || len(ci.Gaps) != 1 {
		t.Fatalf("console_hold = %+v", ci)
	}
	if !flocked(t, port) {
		t.Errorf("%s is not locked after console_hold", port)
	}
	gap := ci.Gaps[0]
	from, err1 := time.Parse(time.RFC3339Nano, gap.From)
	until, err2 := time.Parse(time.RFC3339Nano, gap.Until)
	if err1 != nil || err2 != nil || until.Before(from) || gap.Offset != stop {
		t.Errorf("gap = %+v", gap)
	}
	// The cursor goes on: from where reading stopped, only what came after
	// taking the port back, nothing of the other program's exchange.
	var w writeResult
	decode(t, e.call("serial_send", map[string]any{"console": id, "text": "echo mine"}), &w)
	if w.Cursor != stop {
		t.Errorf("cursor after hold = %d, want %d", w.Cursor, stop)
	}
	var x expectResult
	decode(t, e.call("serial_expect", map[string]any{"console": id, "pattern": "mine\r\nsim> ", "cursor": stop, "timeout_ms": 20000}), &x)
	if strings.Contains(x.Data, "theirs") {
		t.Errorf("output after the hand-over holds the other program's bytes: %q", x.Data)
	}
	var li logInfoResult
	decode(t, e.call("log_info", map[string]any{"console": id}), &li)
	if len(li.Gaps) != 1 {
		t.Errorf("log_info gaps = %+v", li.Gaps)
	}
	tl, _ := os.ReadFile(li.Timeline)
	if !strings.Contains(string(tl), `"event":"released"`) || !strings.Contains(string(tl), "what the device sent meanwhile was not read") {
		t.Errorf("timeline:\n%s", tl)
	}
	// console_hold on a console that is not released just reports it.
	ci = consoleInfo{}
	decode(t, e.call("console_hold", map[string]any{"console": id}), &ci)
	if ci.Released || len(ci.Gaps) != 1 {
		t.Errorf("second console_hold = %+v", ci)
	}
}

// A session cannot hand over a console another session opened: the
// console stays connected and its owner's writes go on.
func TestConsoleReleaseOnlyByOpener(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	c2 := e.connect("second")
	res := callWith(t, context.Background(), c2, "console_release", map[string]any{"connection": id})
	if !res.IsError || !strings.Contains(text(res), "belongs to session") {
		t.Fatalf("console_release by another session: %s", text(res))
	}
	e.call("serial_send", map[string]any{"console": id, "text": "echo still mine"})
	if len(e.srv.leases.List()) != 0 {
		t.Errorf("leases after a refused release: %+v", e.srv.leases.List())
	}
}

// console_release then console_hold leaves the session's acquire_lock as
// it was: held, with its reason.
func TestConsoleHoldKeepsAcquireLock(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	e.call("acquire_lock", map[string]any{"port": id, "reason": "flashing"})
	e.call("console_release", map[string]any{"console": id})
	var ci consoleInfo
	decode(t, e.call("console_hold", map[string]any{"console": id}), &ci)
	if ci.Released || ci.LeaseState != "held" || ci.LeaseOwner == "" {
		t.Fatalf("console_hold after acquire_lock = %+v", ci)
	}
	c2 := e.connect("second")
	res := callWith(t, context.Background(), c2, "serial_send", map[string]any{"console": id, "text": "echo x"})
	if !res.IsError || !strings.Contains(text(res), "(flashing)") {
		t.Errorf("serial_send by another session while the lock is held: %s", text(res))
	}
}

// The end of a session ends its leases: a console it released may be taken
// back by any session.
func TestSessionEndDropsLeases(t *testing.T) {
	e := newEnv(t, envOptions{})
	c2 := e.connect("second")
	var o openResult
	decode(t, callWith(t, context.Background(), c2, "serial_open", map[string]any{"port": e.board.SerialPath()}), &o)
	id := o.ConnectionID
	res := callWith(t, context.Background(), c2, "console_release", map[string]any{"console": id})
	if res.IsError {
		t.Fatal(text(res))
	}
	if msg := e.callErr("console_hold", map[string]any{"console": id}); !strings.Contains(msg, "only that session may release or hold") {
		t.Fatalf("console_hold by the first session: %s", msg)
	}
	// Nor may it close the connection, and so reopen the port, while the
	// other session's flasher may have it.
	if msg := e.callErr("serial_close", map[string]any{"console": id}); !strings.Contains(msg, "released for another program by inprocess") {
		t.Fatalf("serial_close of another session's released console: %s", msg)
	}
	c2.Close()
	waitFor(t, "the lease to end with its session", func() bool { return len(e.srv.leases.List()) == 0 })
	var ci consoleInfo
	decode(t, e.call("console_hold", map[string]any{"console": id}), &ci)
	if ci.Released {
		t.Errorf("console_hold after the other session ended = %+v", ci)
	}
}

// A port another session holds a lease of (acquire_lock, a pool run) is
// busy for everyone else until the lease ends or lapses.
func TestHeldLeaseMakesPortBusy(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	now := time.Now()
	e.srv.leases.Now = func() time.Time { return now }
	key := serialx.LeaseKey(e.board.SerialPath())
	if _, err := e.srv.leases.Hold(context.Background(), key, "pool run 7", serialx.LeaseOptions{TTL: time.Minute, Note: "pool"}); err != nil {
		t.Fatal(err)
	}
	msg := e.callErr("serial_send", map[string]any{"console": id, "text": "echo x"})
	if !strings.HasPrefix(msg, "busy: ") || !strings.Contains(msg, "held by pool run 7") || !strings.Contains(msg, "(pool)") {
		t.Errorf("serial_send on a held port: %s", msg)
	}
	var cl consoleListResult
	decode(t, e.call("console_list", nil), &cl)
	if c := cl.Consoles[0]; c.LeaseOwner != "pool run 7" || c.LeaseState != "held" || c.LeaseExpires == "" {
		t.Errorf("console_list = %+v", c)
	}
	if msg := e.callErr("console_release", map[string]any{"console": id}); !strings.Contains(msg, "held by pool run 7") {
		t.Errorf("console_release on a held port: %s", msg)
	}
	// The lease lapses: the port is free again.
	now = now.Add(time.Minute)
	e.call("serial_send", map[string]any{"console": id, "text": "echo free"})

	// The owner itself is not refused. (Its session id is the owner of a
	// release.)
	var ci consoleInfo
	decode(t, e.call("console_release", map[string]any{"console": id}), &ci)
	e.call("console_hold", map[string]any{"console": id})
	if _, err := e.srv.leases.Hold(context.Background(), key, ci.LeaseOwner, serialx.LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	e.call("serial_send", map[string]any{"console": id, "text": "echo mine"})
	if err := e.srv.leases.Check(key, "someone else"); !errors.Is(err, serialx.ErrLeased) {
		t.Errorf("Check = %v", err)
	}
	// serial_close ends the port's lease.
	e.call("serial_close", map[string]any{"console": id})
	if _, ok := e.srv.leases.Get(key); ok {
		t.Error("lease outlived serial_close")
	}
}

// The streamable HTTP session table tells of every session that ends
// (DELETE) or is forgotten (past its bound), so that its leases end too.
func TestSessionTableTellsEnded(t *testing.T) {
	var ended []string
	tab := newSessionTable(2)
	tab.ended = func(id string) { ended = append(ended, id) }
	a, b := tab.Generate(), tab.Generate()
	tab.Terminate(a)
	tab.Terminate(a) // once only
	c := tab.Generate()
	d := tab.Generate() // forgets b
	if strings.Join(ended, " ") != a+" "+b {
		t.Errorf("ended = %v, want %s then %s", ended, a, b)
	}
	if !tab.known(c) || !tab.known(d) || tab.known(b) {
		t.Error("the table lost the wrong sessions")
	}
}

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A resource that does not exist, or no longer does, is the MCP error
// -32002 (resource not found), with the reason, not -32603.
func TestMissingResourceIsNotFound(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	run := e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}})
	gone := runReportURI(run.RunID)
	// The report is written when first read; then its file goes.
	var first mcp.ReadResourceRequest
	first.Params.URI = gone
	if _, err := e.c.ReadResource(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.srv.logDir, "runs", run.RunID, "report.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, uri, reason string }{
		{"unknown run", "hilrun://runs/r999/report.json", "no run r999"},
		{"unknown scheme", "file:///etc/passwd", "unknown resource"},
		{"unknown connection", "hilrun://connections/c42/log", "no log for connection c42"},
		{"unknown task", "hilrun://tasks/t9/log", "no task t9"},
		{"file gone", gone, "its file is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req mcp.ReadResourceRequest
			req.Params.URI = tc.uri
			_, err := e.c.ReadResource(context.Background(), req)
			if !errors.Is(err, mcp.ErrResourceNotFound) {
				t.Fatalf("read %s: want -32002 resource not found, got %v", tc.uri, err)
			}
			if !strings.Contains(err.Error(), tc.uri) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("read %s: the error %q does not name the URI and %q", tc.uri, err, tc.reason)
			}
		})
	}
	// A resource that exists still reads.
	if rep := readResource(t, e, runReportURI(e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}}).RunID)); !strings.Contains(rep, "passed") {
		t.Errorf("report: %s", rep)
	}
}

// A port held by a cancelled call is waited for, not busy; one held by a
// live call is busy at once.
func TestLockerWaitsForCancelledHolder(t *testing.T) {
	l := newLocker()
	holderCtx, cancelHolder := context.WithCancel(context.Background())
	release, err := l.acquire(holderCtx, []string{"port a"}, "cancelled call", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(context.Background(), []string{"port a"}, "live", 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("a live holder: want busy, got %v", err)
	}
	cancelHolder()
	got := make(chan error, 1)
	go func() {
		rel, err := l.acquire(context.Background(), []string{"port a"}, "next call", 0)
		if err == nil {
			rel()
		}
		got <- err
	}()
	waitFor(t, "the next call to wait for the cancelled one", func() bool { return l.waiters() > 0 })
	release()
	if err := <-got; err != nil {
		t.Fatalf("the call after the cancellation: %v", err)
	}
}

// Over HTTP a client's cancellation may arrive after its next call: a
// call that finds its port held by a live call of its own session waits
// a moment for that cancellation; another session's call is busy at once.
func TestLockerCancellationRace(t *testing.T) {
	l := newLocker()
	holderCtx, cancelHolder := context.WithCancel(withHTTPSession(context.Background(), "s1"))
	release, err := l.acquire(holderCtx, []string{"port a"}, "to be cancelled", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(withHTTPSession(context.Background(), "s2"), []string{"port a"}, "other session", 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("another session: want busy at once, got %v", err)
	}
	got := make(chan error, 1)
	go func() {
		rel, err := l.acquire(withHTTPSession(context.Background(), "s1"), []string{"port a"}, "next call", 0)
		if err == nil {
			rel()
		}
		got <- err
	}()
	waitFor(t, "the next call to wait", func() bool { return l.waiters() > 0 })
	cancelHolder() // the cancellation arrives after the next call
	release()
	if err := <-got; err != nil {
		t.Fatalf("the call sent before the cancellation arrived: %v", err)
	}
}

// A long step sends heartbeats: progress that grows, stays below the next
// step, and names the running step.
func TestProgressHeartbeat(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Heartbeat = 20 * time.Millisecond }})
	req := request("serial_sequence", map[string]any{"steps": []any{map[string]any{"delay_ms": 500}}})
	req.Params.Meta = &mcp.Meta{ProgressToken: "hb"}
	res, err := e.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var ps []mcp.JSONRPCNotification
	waitFor(t, "the last progress", func() bool {
		ps = e.notifications("notifications/progress")
		return len(ps) > 0 && num(ps[len(ps)-1].Params.AdditionalFields["progress"]) == 1
	})
	beats, prev := 0, -1.0
	for _, p := range ps {
		f := p.Params.AdditionalFields
		v := num(f["progress"])
		if v <= prev {
			t.Errorf("progress went from %v to %v", prev, v)
		}
		prev = v
		if msg, _ := f["message"].(string); strings.HasPrefix(msg, "0 running delay") {
			beats++
			if v <= 0 || v >= 1 || num(f["total"]) != 1 {
				t.Errorf("heartbeat %v", f)
			}
		}
	}
	if beats == 0 {
		t.Errorf("no heartbeat during a 500ms step with Heartbeat 20ms: %v", ps)
	}
}

// A one-shot tool that waits (serial_expect, up to 120 s) sends heartbeats
// too, all before its result.
func TestToolHeartbeat(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Heartbeat = 20 * time.Millisecond }})
	c := newStdioClient(t, e)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"serial_open","arguments":{"port":` + jsonString(e.board.SerialPath()) + `}}}`)
	var open stdioMsg
	for open = c.recv(); open.ID == nil; open = c.recv() {
	}
	conn, _ := open.Result["structuredContent"].(map[string]any)["connection_id"].(string)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"serial_expect","_meta":{"progressToken":"x"},"arguments":{"connection":"` + conn + `","pattern":"never printed","timeout_ms":500}}}`)
	beats, prev := 0, 0.0
	for m := c.recv(); m.ID == nil || num(m.ID) != 3; m = c.recv() {
		if m.Method != "notifications/progress" {
			continue
		}
		beats++
		if msg, _ := m.Params["message"].(string); m.Params["progressToken"] != "x" || !strings.HasPrefix(msg, "serial_expect running ") {
			t.Errorf("heartbeat %v", m.Params)
		}
		if v := num(m.Params["progress"]); v <= prev || v >= 1 {
			t.Errorf("progress %v after %v", v, prev)
		} else {
			prev = v
		}
	}
	if beats == 0 {
		t.Error("no heartbeat during a 500ms serial_expect with Heartbeat 20ms")
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	for m := c.recv(); m.ID == nil || num(m.ID) != 4; m = c.recv() {
		if m.Method == "notifications/progress" {
			t.Errorf("progress after the result: %v", m.Params)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// stdioClient talks to a server over ServeStdio, line by line.
type stdioClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines *bufio.Scanner
}

type stdioMsg struct {
	ID     any            `json:"id"`
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
	Result map[string]any `json:"result"`
}

// newStdioClient serves e's server over pipes until the test ends, and
// initializes.
func newStdioClient(t *testing.T, e *env) *stdioClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.srv.ServeStdio(ctx, inR, outW); outW.Close(); close(done) }()
	// mcp-go keeps the stdio session in a global: the next test's server
	// may start only once this one has ended.
	t.Cleanup(func() {
		inW.Close()
		cancel()
		go io.Copy(io.Discard, outR)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("ServeStdio did not end")
		}
	})
	c := &stdioClient{t: t, in: inW, lines: bufio.NewScanner(outR)}
	c.lines.Buffer(make([]byte, 1<<20), 1<<20)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-test","version":"1"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *stdioClient) send(m string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, m+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioClient) recv() stdioMsg {
	c.t.Helper()
	if !c.lines.Scan() {
		c.t.Fatalf("stdout ended: %v", c.lines.Err())
	}
	var m stdioMsg
	if err := json.Unmarshal(c.lines.Bytes(), &m); err != nil {
		c.t.Fatalf("not JSON: %q", c.lines.Text())
	}
	return m
}

// Under stdio every progress line comes before the result; a cancelled
// call gets no response, and the next call finds the console free.
func TestStdioProgressAndCancellation(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Heartbeat = 20 * time.Millisecond }})
	c := newStdioClient(t, e)
	send, recv := c.send, c.recv
	answered := map[float64]bool{}
	for id := 2; id < 12; id++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"serial_sequence","_meta":{"progressToken":%d},"arguments":{"steps":[{"send":"echo p","expect":"p"},{"delay_ms":1}]}}}`, id, id))
		for {
			m := recv()
			if m.Method == "notifications/progress" && answered[num(m.Params["progressToken"])] {
				t.Errorf("progress after the result: %v", m.Params)
			}
			if m.ID != nil {
				answered[num(m.ID)] = true
				break
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"serial_sequence","_meta":{"progressToken":20},"arguments":{"steps":[{"send":"echo c","expect":"c"},{"delay_ms":60000}]}}}`)
	for m := recv(); m.Method != "notifications/progress"; m = recv() {
		if m.ID != nil {
			t.Fatalf("want progress of the call to cancel, got %+v", m)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":20,"reason":"test"}}`)
	send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"serial_sequence","arguments":{"steps":[{"send":"echo after","expect":"after"}]}}}`)
	send(`{"jsonrpc":"2.0","id":22,"method":"tools/list"}`)
	for got := 0; got < 2; {
		m := recv()
		switch {
		case m.ID == nil:
		case num(m.ID) == 20:
			t.Errorf("the cancelled call got a response: %v", m.Result)
		case num(m.ID) == 21:
			got++
			if m.Result["isError"] == true {
				t.Errorf("the call right after the cancellation: %v", m.Result["content"])
			}
		default:
			got++
		}
	}
}

// Over HTTP, the 202 that acknowledges notifications/cancelled comes once
// the cancelled call has released its port; the call's stream ends
// without a response.
func TestHTTPCancellationAcknowledged(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	h := serveHTTP(t, e, "127.0.0.1:0", "")
	c := newRawHTTP(h.URL(), "")
	session := c.initialize(t)
	hdr := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	stream := make(chan rawResponse, 1)
	go func() {
		stream <- c.post(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"serial_sequence","_meta":{"progressToken":"t7"},"arguments":{"steps":[{"send":"echo c","expect":"c"},{"delay_ms":60000}]}}}`, hdr)
	}()
	key := portKey(realPort(e.board.SerialPath()))
	waitFor(t, "the call to hold the console", func() bool { return e.srv.locks.holderOf(key) != "" })
	ack := c.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, hdr)
	if ack.status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: status %d: %s", ack.status, ack.body)
	}
	if h := e.srv.locks.holderOf(key); h != "" {
		t.Errorf("the cancellation was acknowledged while %s still held the console", h)
	}
	r := <-stream
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream" || strings.Contains(r.body, `"result"`) {
		t.Errorf("the cancelled call's response: status %d, %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	c.toolsList(t, session)
}

// A server left running keeps the logs of its last closed connections
// only: older ones go, files and resources, so that agents opening and
// closing connections for weeks do not fill the disk.
func TestClosedConnectionLogsAreBounded(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	e.srv.keepClosed = 2
	var ids []string
	for i := range 3 {
		// serial_open directly: the board prints its banner only once.
		var op openResult
		decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath()}), &op)
		id := op.ConnectionID
		word := fmt.Sprintf("kept-%d", i)
		e.call("serial_write", map[string]any{"connection": id, "data": "echo " + word, "newline": true})
		e.call("serial_expect", map[string]any{"connection": id, "pattern": word + "\r\n", "cursor": 0})
		e.call("serial_close", map[string]any{"connection": id})
		ids = append(ids, id)
	}
	gone := connLogURI(ids[0])
	var req mcp.ReadResourceRequest
	req.Params.URI = gone
	_, err := e.c.ReadResource(context.Background(), req)
	if !errors.Is(err, mcp.ErrResourceNotFound) || !strings.Contains(err.Error(), "those of the last 2 closed") {
		t.Fatalf("read %s after two later closes: want -32002 naming the bound, got %v", gone, err)
	}
	if _, err := os.Stat(filepath.Join(e.srv.logDir, "connections", ids[0])); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the first connection's log folder is still there (%v)", err)
	}
	list, err := e.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if r.URI == gone {
			t.Errorf("resources/list still lists %s", gone)
		}
	}
	for i, id := range ids[1:] {
		if log := readResource(t, e, connLogURI(id)); !strings.Contains(log, fmt.Sprintf("kept-%d", i+1)) {
			t.Errorf("connection %s log: %q", id, log)
		}
	}
}

// A server started on the --log-dir of an earlier one numbers its
// connections, runs and tasks after the earlier ones: none of their logs
// is overwritten, or served as the new server's.
func TestLogDirOfAnEarlierServerIsNotReused(t *testing.T) {
	dir := t.TempDir()
	oldLog := filepath.Join(dir, "connections", "c7", "console.log")
	for _, p := range []string{oldLog, filepath.Join(dir, "runs", "r3", "report.json"), filepath.Join(dir, "tasks", "t5.log"), filepath.Join(dir, "tasks", "t05x.log")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("the earlier server's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.LogDir = dir }})
	var op openResult
	decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath()}), &op)
	if op.ConnectionID != "c8" {
		t.Errorf("first connection %s, want c8 (after the earlier server's c7)", op.ConnectionID)
	}
	e.call("serial_close", map[string]any{"connection": op.ConnectionID})
	run := e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}})
	if run.RunID != "r4" {
		t.Errorf("first run %s, want r4 (after the earlier server's r3)", run.RunID)
	}
	if got := e.srv.tasks.add("build").id; got != "t6" {
		t.Errorf("first task %s, want t6 (after the earlier server's t5)", got)
	}
	if b, err := os.ReadFile(oldLog); err != nil || string(b) != "the earlier server's\n" {
		t.Errorf("the earlier server's c7 log: %q, %v", b, err)
	}
}

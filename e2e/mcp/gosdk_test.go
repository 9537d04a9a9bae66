//go:build unix

package mcpe2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// heartbeat is the --heartbeat the Go SDK tests start hilrun with: well
// below the 3 s step whose heartbeats they wait for, so that a slow machine
// still sends several.
const heartbeat = "200ms"

// orderingCalls is how many sequences check that no progress comes after
// the result.
const orderingCalls = 20

// TestGoSDKStdio runs the official Go SDK's client against `hilrun mcp
// --sim`, started by the SDK's CommandTransport.
func TestGoSDKStdio(t *testing.T) {
	bin := hilrunBin(t)
	mark := randomHex(t, 8)
	t.Cleanup(func() { checkNoOrphans(t, mark) })
	var serverOut testenv.Buffer
	cmd := exec.Command(bin, "mcp", "--sim", "--heartbeat", heartbeat)
	cmd.Env = markedEnv(mark)
	cmd.Stderr = &serverOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Cleanup(func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		t.Logf("hilrun mcp output:\n%s", serverOut.String())
	})
	goSDKScenario(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: stopGrace})
}

// TestGoSDKHTTP runs the official Go SDK's client against `hilrun mcp --sim
// --http ... --token ...` with its StreamableClientTransport.
func TestGoSDKHTTP(t *testing.T) {
	bin := hilrunBin(t)
	mark := randomHex(t, 8)
	token := randomHex(t, 16)
	addr, exited := startHTTP(t, bin, mark, "--sim", "--token", token, "--heartbeat", heartbeat)
	goSDKScenario(t, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
		MaxRetries: -1,
	})
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("hilrun mcp --http exited during the test: %v", err)
	default:
	}
}

// bearer adds the token to every request, as a client's HTTP settings do.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// goSDKScenario connects through t and checks, with a recording of the
// messages in the order the client read them: tools/list, a sequence on
// the virtual board with progress (none after its result), heartbeats
// during a single long step, an unknown resource (-32002), and a call
// cancelled mid-step, which gets no response, after which a call of the
// same port succeeds at once.
func goSDKScenario(t *testing.T, transport mcp.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	wire := &wireLog{progressed: make(chan string, 100)}
	client := mcp.NewClient(&mcp.Implementation{Name: "hilrun-go-sdk-e2e", Version: "0.0.0"}, nil)
	cs, err := client.Connect(ctx, &recorder{Transport: transport, log: wire}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	// hilrun offers the versions with sessions only: the SDK tries
	// 2026-07-28 first and falls back to initialize.
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated protocol version %s, want 2025-11-25", v)
	}

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " serial_sequence ") {
			t.Fatalf("tools/list has no serial_sequence: %v", names)
		}
	})

	t.Run("serial_sequence with progress", func(t *testing.T) {
		// The last progress and the result leave the server at about the
		// same moment: a race between them shows within some calls.
		for i := range orderingCalls {
			token := fmt.Sprintf("seq%d", i)
			sc := callSequence(ctx, t, cs, token, []map[string]any{
				{"send": "", "expect": "sim> ", "read_timeout": 20.0, "line_ending": "lf"},
				{"send": "status", "expect": "led: ", "read_timeout": 20.0, "line_ending": "lf"},
				{"delay_ms": 1},
			})
			if sc["passed"] != true {
				t.Fatalf("the sequence did not pass: %v", sc)
			}
			if n := wire.checkProgress(t, token); n == 0 {
				t.Errorf("call %d: no progress notification arrived before the result", i)
			}
		}
	})

	t.Run("heartbeat during one long step", func(t *testing.T) {
		sc := callSequence(ctx, t, cs, "heartbeat", []map[string]any{{"delay_ms": 3000}})
		if sc["passed"] != true {
			t.Fatalf("the sequence did not pass: %v", sc)
		}
		wire.checkProgress(t, "heartbeat")
		if n := wire.heartbeats("heartbeat"); n == 0 {
			t.Errorf("no heartbeat while the 3 s step ran (--heartbeat %s); progress:\n%s", heartbeat, wire.dump("heartbeat"))
		}
	})

	t.Run("unknown resource is -32002", func(t *testing.T) {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hilrun://runs/r999/report.json"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32002 {
			t.Fatalf("resources/read of an unknown run: want JSON-RPC error -32002 (resource not found), got %v", err)
		}
	})

	t.Run("cancel mid-step, then call at once", func(t *testing.T) {
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(cctx, sequenceParams("cancelled", []map[string]any{
				{"send": "", "expect": "sim> ", "read_timeout": 20.0, "line_ending": "lf"},
				{"delay_ms": 60000},
			}))
			done <- err
		}()
		// The first progress says the call runs and holds the console.
		select {
		case <-wire.waitProgress("cancelled"):
		case err := <-done:
			t.Fatalf("the call ended before it was cancelled: %v", err)
		case <-ctx.Done():
			t.Fatal("no progress from the call to cancel")
		}
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call returned %v, want context.Canceled", err)
		}
		// The session survives the cancellation.
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list after the cancellation: %v", err)
		}
		// No lock_timeout_ms: a port still held by the cancelled call
		// would make this fail with "busy".
		sc := callSequence(ctx, t, cs, "after-cancel", []map[string]any{
			{"send": "status", "expect": "led: ", "read_timeout": 20.0, "line_ending": "lf"},
		})
		if sc["passed"] != true {
			t.Fatalf("the call after the cancellation did not pass: %v", sc)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list after the call after the cancellation: %v", err)
		}
		if id, ok := wire.requestID("cancelled"); ok && wire.responded(id) {
			t.Errorf("the cancelled call (request %v) got a response", id)
		}
	})
}

func sequenceParams(token string, steps []map[string]any) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: "serial_sequence", Arguments: map[string]any{"steps": steps}}
	p.SetProgressToken(token)
	return p
}

// callSequence runs serial_sequence with progress token token and returns
// its structured result.
func callSequence(ctx context.Context, t *testing.T, cs *mcp.ClientSession, token string, steps []map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(ctx, sequenceParams(token, steps))
	if err != nil {
		t.Fatalf("serial_sequence: %v", err)
	}
	if res.IsError {
		t.Fatalf("serial_sequence returned an error: %s", contentText(res))
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("serial_sequence returned no structured content: %s", contentText(res))
	}
	return sc
}

func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// recorder is a transport whose connections note every message in the
// order the client reads or writes it: the SDK hands notifications to
// their handlers on goroutines of their own, so only the wire tells
// whether a progress notification came after its call's result.
type recorder struct {
	mcp.Transport
	log *wireLog
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, log: r.log}, nil
}

type recordingConn struct {
	mcp.Connection
	log *wireLog
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.log.note(false, m)
	}
	return m, err
}

func (c *recordingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.log.note(true, m)
	return c.Connection.Write(ctx, m)
}

// wireEvent is one message: a call the client sent (with its progress
// token), a progress notification or a response it read.
type wireEvent struct {
	kind     string // "call", "progress" or "response"
	id       string
	token    string
	progress float64
	message  string
}

type wireLog struct {
	mu         sync.Mutex
	events     []wireEvent
	progressed chan string // tokens of progress notifications, as they arrive
}

func (w *wireLog) note(sent bool, m jsonrpc.Message) {
	var ev wireEvent
	switch m := m.(type) {
	case *jsonrpc.Request:
		var p struct {
			Meta struct {
				ProgressToken any `json:"progressToken"`
			} `json:"_meta"`
			ProgressToken any     `json:"progressToken"`
			Progress      float64 `json:"progress"`
			Message       string  `json:"message"`
		}
		json.Unmarshal(m.Params, &p)
		switch {
		case sent && m.Method == "tools/call" && p.Meta.ProgressToken != nil:
			ev = wireEvent{kind: "call", id: fmt.Sprint(m.ID.Raw()), token: fmt.Sprint(p.Meta.ProgressToken)}
		case !sent && m.Method == "notifications/progress":
			ev = wireEvent{kind: "progress", token: fmt.Sprint(p.ProgressToken), progress: p.Progress, message: p.Message}
		default:
			return
		}
	case *jsonrpc.Response:
		if sent {
			return
		}
		ev = wireEvent{kind: "response", id: fmt.Sprint(m.ID.Raw())}
	default:
		return
	}
	w.mu.Lock()
	w.events = append(w.events, ev)
	w.mu.Unlock()
	if ev.kind == "progress" {
		select {
		case w.progressed <- ev.token:
		default:
		}
	}
}

// waitProgress returns a channel closed once a progress notification with
// token has arrived.
func (w *wireLog) waitProgress(token string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			w.mu.Lock()
			for _, ev := range w.events {
				if ev.kind == "progress" && ev.token == token {
					w.mu.Unlock()
					return
				}
			}
			w.mu.Unlock()
			if <-w.progressed == token {
				return
			}
		}
	}()
	return ch
}

func (w *wireLog) requestID(token string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range w.events {
		if ev.kind == "call" && ev.token == token {
			return ev.id, true
		}
	}
	return "", false
}

func (w *wireLog) responded(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range w.events {
		if ev.kind == "response" && ev.id == id {
			return true
		}
	}
	return false
}

// checkProgress fails t if a progress notification with token came after
// its call's result, or did not increase; it returns how many came before.
func (w *wireLog) checkProgress(t *testing.T, token string) int {
	t.Helper()
	id, ok := w.requestID(token)
	if !ok {
		t.Fatalf("no call with progress token %q was sent", token)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n, answered, last := 0, false, -1.0
	for _, ev := range w.events {
		switch {
		case ev.kind == "response" && ev.id == id:
			answered = true
		case ev.kind == "progress" && ev.token == token:
			if answered {
				t.Errorf("progress %v (%q) arrived after the result of request %s", ev.progress, ev.message, id)
			}
			if ev.progress <= last {
				t.Errorf("progress went from %v to %v (%q): it must increase with every notification", last, ev.progress, ev.message)
			}
			last = ev.progress
			n++
		}
	}
	if !answered {
		t.Errorf("the response to request %s was not recorded", id)
	}
	return n
}

// heartbeats counts the progress notifications with token that say a step
// is still running.
func (w *wireLog) heartbeats(token string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ev := range w.events {
		if ev.kind == "progress" && ev.token == token && strings.Contains(ev.message, " running ") {
			n++
		}
	}
	return n
}

func (w *wireLog) dump(token string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sb strings.Builder
	for _, ev := range w.events {
		if ev.token == token || ev.kind == "response" {
			fmt.Fprintf(&sb, "%s %s %v %q\n", ev.kind, ev.id, ev.progress, ev.message)
		}
	}
	return sb.String()
}

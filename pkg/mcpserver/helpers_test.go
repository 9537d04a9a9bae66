package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/sim/ocdtelnet"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// env is a server against a virtual board, with an in-process client.
type env struct {
	t      *testing.T
	board  *sim.Board
	telnet string
	srv    *Server
	c      *client.Client
	log    *testenv.Buffer

	mu     sync.Mutex
	notifs []mcp.JSONRPCNotification
}

type envOptions struct {
	// sim binds the board as the server's default port and probe (--sim);
	// else tests open its port by path.
	sim bool
	// realOpenOCD drives the board's JTAG port with the real OpenOCD.
	realOpenOCD bool
	config      func(*Config)
	// camera, when set, takes the pictures of the server's bench.
	camera runner.CameraGrabber
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, log: &testenv.Buffer{}}
	e.board = sim.New(sim.Options{})
	if err := e.board.Start(); err != nil {
		t.Fatalf("start the virtual board: %v", err)
	}
	t.Cleanup(func() { e.board.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if o.realOpenOCD {
		e.telnet = startOpenOCD(t, ctx, e.board)
	} else {
		stub, err := ocdtelnet.Serve(ctx, e.board.Memory(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stub.Close() })
		e.telnet = stub.Addr()
	}
	cfg := Config{Log: e.log, Version: "test", Wire: engine.MCPWire}
	if o.sim {
		cfg.DefaultPort = e.board.SerialPath()
		cfg.DefaultOpenOCD = e.telnet
		cfg.DefaultBoard = sim.BannerTitle
	}
	if o.config != nil {
		o.config(&cfg)
	}
	// The programs the server starts find theirs on this PATH.
	cfg.Policy.Env = environ.Host()
	if o.camera != nil {
		// The wiring's bench, with this camera.
		wire := cfg.Wire
		cfg.Wire = func(g gate.Policy) (runner.Bench, ProbeDialer, func(*steps.Device) serialx.Config) {
			b, d, sc := wire(g)
			b.Camera = o.camera
			return b, d, sc
		}
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	e.srv = srv
	e.c = e.connect("test-client")
	return e
}

// connect makes another in-process client of the same server.
func (e *env) connect(name string) *client.Client {
	e.t.Helper()
	c, err := client.NewInProcessClient(e.srv.MCP())
	if err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		e.mu.Lock()
		e.notifs = append(e.notifs, n)
		e.mu.Unlock()
	})
	init := mcp.InitializeRequest{}
	// The newest version the server offers its clients (ProtocolVersions).
	init.Params.ProtocolVersion = ProtocolVersions[0]
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func startOpenOCD(t *testing.T, ctx context.Context, board *sim.Board) string {
	t.Helper()
	testenv.NeedTool(t, "openocd", "apt-get install openocd")
	jt, err := jtag.Serve(ctx, board.Memory(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jt.Close() })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sim.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(jt.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := openocd.Launch(ctx, openocd.LaunchConfig{Configs: []string{cfg}, Dir: dir, Env: []string{"HOME=" + dir}, Procs: process.Permit(environ.Host()), Dial: dial.Anywhere()})
	if err != nil {
		t.Fatalf("launch openocd: %v", err)
	}
	t.Cleanup(func() { proc.Stop() })
	return proc.TelnetAddr()
}

func request(name string, args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	return req
}

// callWith calls a tool on client c. A structured result must validate
// against the tool's output schema.
func callWith(t *testing.T, ctx context.Context, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(ctx, request(name, args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError && res.StructuredContent != nil {
		checkOutput(t, c, name, res.StructuredContent)
	}
	return res
}

// outputSchemas caches the compiled output schemas of each client's tools.
var outputSchemas sync.Map // *client.Client -> map[string]*jsonschema.Schema

// checkOutput fails the test when out does not validate against the output
// schema tool advertises to c.
func checkOutput(t *testing.T, c *client.Client, tool string, out any) {
	t.Helper()
	v, ok := outputSchemas.Load(c)
	if !ok {
		list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		compiled := map[string]*jsonschema.Schema{}
		for _, tl := range list.Tools {
			raw, err := json.Marshal(tl.OutputSchema)
			if err != nil || len(tl.OutputSchema.Type) == 0 {
				continue
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: output schema: %v", tl.Name, err)
			}
			comp := jsonschema.NewCompiler()
			url := "mem:///" + tl.Name + ".json"
			if err := comp.AddResource(url, doc); err != nil {
				t.Fatalf("%s: output schema: %v", tl.Name, err)
			}
			sch, err := comp.Compile(url)
			if err != nil {
				t.Fatalf("%s: compile the output schema: %v", tl.Name, err)
			}
			compiled[tl.Name] = sch
		}
		v, _ = outputSchemas.LoadOrStore(c, compiled)
	}
	sch := v.(map[string]*jsonschema.Schema)[tool]
	if sch == nil {
		return
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%s: marshal the result: %v", tool, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: the structured result does not match the output schema: %v\nresult: %.2000s", tool, err, data)
	}
}

// call calls a tool and fails the test when it reports an error.
func (e *env) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	res := callWith(e.t, context.Background(), e.c, name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	return res
}

// callErr calls a tool that must fail and returns its error text.
func (e *env) callErr(name string, args map[string]any) string {
	e.t.Helper()
	res := callWith(e.t, context.Background(), e.c, name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%v) succeeded, want an error: %s", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decode turns a result's structured content into v.
func decode(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

func (e *env) open(args map[string]any) string {
	e.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	if _, ok := args["port"]; !ok {
		args["port"] = e.board.SerialPath()
	}
	var out openResult
	decode(e.t, e.call("serial_open", args), &out)
	// Wait for the boot banner, so tests start from a quiet console.
	e.call("serial_expect", map[string]any{"connection": out.ConnectionID, "pattern": "sim> ", "cursor": 0, "timeout_ms": 20000})
	return out.ConnectionID
}

func (e *env) sequence(args map[string]any) sequenceResult {
	e.t.Helper()
	var out sequenceResult
	decode(e.t, e.call("serial_sequence", args), &out)
	return out
}

func (e *env) notifications(method string) []mcp.JSONRPCNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range e.notifs {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func statuses(r sequenceResult) string {
	var s []string
	for _, st := range r.Steps {
		s = append(s, st.Path+":"+string(st.Status))
	}
	return strings.Join(s, " ")
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

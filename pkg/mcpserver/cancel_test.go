package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelRounds is how many times TestCancelThenRead cancels a call and reads
// at once: the race it guards against showed about once in eight.
const cancelRounds = 200

// TestCancelThenRead cancels a serial_expect from the official Go SDK client
// and calls serial_read on the same port at once, without lock_timeout_ms,
// again and again: the read must never find the port busy. The SDK sends
// notifications/cancelled from a goroutine of its own, so over stdio the
// read may reach the server before the cancellation does.
func TestCancelThenRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		connect func(t *testing.T, e *env) sdk.Transport
	}{
		{"stdio", func(t *testing.T, e *env) sdk.Transport {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			served := make(chan struct{})
			go func() { e.srv.ServeStdio(context.Background(), inR, outW); outW.Close(); close(served) }()
			// mcp-go keeps the stdio session in a global: the next
			// test's server may start only once this one has ended.
			t.Cleanup(func() { inW.Close(); <-served })
			return &sdk.IOTransport{Reader: outR, Writer: inW}
		}},
		{"http", func(t *testing.T, e *env) sdk.Transport {
			h := serveHTTP(t, e, "127.0.0.1:0", "")
			return &sdk.StreamableClientTransport{Endpoint: h.URL(), MaxRetries: -1}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{sim: true})
			conn := e.open(nil)
			key := portKey(realPort(e.board.SerialPath()))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "cancel-then-read", Version: "1"}, nil)
			cs, err := client.Connect(ctx, tc.connect(t, e), nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			for i := range cancelRounds {
				cctx, stop := context.WithCancel(ctx)
				ended := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "serial_expect", Arguments: map[string]any{
						"connection": conn, "pattern": "never printed", "timeout_ms": 60000,
					}})
					ended <- err
				}()
				waitFor(t, "serial_expect to hold the port", func() bool { return e.srv.locks.holderOf(key) != "" })
				stop()
				if err := <-ended; !errors.Is(err, context.Canceled) {
					t.Fatalf("round %d: the cancelled serial_expect returned %v, want context.Canceled", i, err)
				}
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "serial_read", Arguments: map[string]any{"connection": conn}})
				if err != nil {
					t.Fatalf("round %d: serial_read: %v", i, err)
				}
				if res.IsError {
					var text []string
					for _, c := range res.Content {
						if tc, ok := c.(*sdk.TextContent); ok {
							text = append(text, tc.Text)
						}
					}
					t.Fatalf("round %d: serial_read right after the cancellation failed: %s", i, strings.Join(text, "\n"))
				}
			}
		})
	}
}

// TestCancelBeforeStart sends a call, its cancellation and a read of the
// same port in one write over stdio, again and again: the cancellation may
// be read before the call has started, and must still end it, so that the
// read finds the port free.
func TestCancelBeforeStart(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	c := newStdioClient(t, e)
	for i := range 50 {
		call, read := 10+2*i, 11+2*i
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"serial_expect","arguments":{"connection":%q,"pattern":"never printed","timeout_ms":60000}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n"+
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"serial_read","arguments":{"connection":%q}}}`,
			call, conn, call, read, conn))
		m := c.recv()
		if fmt.Sprint(m.ID) != fmt.Sprint(read) {
			t.Fatalf("round %d: got %v, want only the response to the read (request %d)", i, m, read)
		}
		if m.Result["isError"] == true {
			t.Fatalf("round %d: the read after a call cancelled before it started failed: %v", i, m.Result["content"])
		}
	}
}

// cancelWatch finds notifications/cancelled lines however the input is cut
// into reads, and only those.
func TestCancelWatch(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"` + strings.Repeat("x", maxWatchedLine) + `"}}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"serial_write","arguments":{"data":"notifications/cancelled"}}}`,
		long,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
		`not json notifications/cancelled`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
	}, "\n") + "\n"
	for _, tc := range []struct {
		name  string
		chunk int
	}{
		{"one read", len(input)},
		{"byte by byte", 1},
		{"odd reads", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			w := &cancelWatch{r: &chunked{s: input, n: tc.chunk}, cancelled: func(id any) { got = append(got, idKey(id)) }}
			b, err := io.ReadAll(w)
			if err != nil || string(b) != input {
				t.Fatalf("the input did not pass through unchanged: %v", err)
			}
			if want := `3 "a" 7`; strings.Join(got, " ") != want {
				t.Errorf("cancelled %v, want %s", got, want)
			}
		})
	}
}

// chunked reads s at most n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

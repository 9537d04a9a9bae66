package mcpserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// slowBody opens a connection to addr and sends a POST that declares a
// body of length bytes, then the first bytes of it.
func slowBody(t *testing.T, addr string, length int, first string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", length, first)
	return conn
}

// readStatus reads the status line of the answer on conn, within an upper
// bound for a hang.
func readStatus(t *testing.T, conn net.Conn) (int, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

// TestHTTPIdleBodiesHoldNothing checks that bodies are charged as their
// bytes arrive: many connections that declare the largest body and send a
// byte of it hold a byte each, and other clients still get in.
func TestHTTPIdleBodiesHoldNothing(t *testing.T) {
	const maxBody = 1000
	g := &guard{
		origins: map[string]bool{}, maxBody: maxBody, bodyTimeout: time.Minute, sessions: newSessionTable(0),
		next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
	}
	srv := httptest.NewServer(g)
	// Last, once the connections are closed.
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	const idle = 3 * heldBodiesFactor
	for range idle {
		slowBody(t, addr, maxBody, "{")
	}
	waitFor(t, "the idle bodies' first bytes", func() bool { return g.heldBytes() >= idle })
	c := newRawHTTP(srv.URL, "")
	if r := c.post(t, paddedInitialize(maxBody), nil); r.status != http.StatusOK {
		t.Errorf("a client beside %d idle bodies: status %d: %s", idle, r.status, r.body)
	}
}

// rateGuard serves a guard that wants bodies at 1 KiB/s after grace, with
// a body limit of maxRateBody bytes.
func rateGuard(t *testing.T, grace time.Duration) (*guard, string) {
	t.Helper()
	g := &guard{
		origins: map[string]bool{}, maxBody: maxRateBody, bodyTimeout: time.Minute, sessions: newSessionTable(0),
		bodyRate: 1 << 10, bodyGrace: grace,
		next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
	}
	srv := httptest.NewServer(g)
	// Last, once the connections are closed.
	t.Cleanup(srv.Close)
	return g, strings.TrimPrefix(srv.URL, "http://")
}

const maxRateBody = 100_000

// TestHTTPSlowBodiesAreCutOff checks the minimum rate, with a short grace
// so the test is quick: a body that stops, or trickles, is cut off with
// 408 once the grace has passed. A body sent at once is read, with the
// real grace: a loaded machine may pause the server for longer than the
// short one.
func TestHTTPSlowBodiesAreCutOff(t *testing.T) {
	g, addr := rateGuard(t, 200*time.Millisecond)
	t.Run("idle", func(t *testing.T) {
		conn := slowBody(t, addr, maxRateBody, "{")
		status, body := readStatus(t, conn)
		if status != http.StatusRequestTimeout || !strings.Contains(body, "--min-body-rate") {
			t.Errorf("an idle body: status %d: %s", status, body)
		}
	})
	t.Run("trickle", func(t *testing.T) {
		conn := slowBody(t, addr, maxRateBody, "{")
		answered := make(chan struct{})
		go func() {
			// A byte every 20 ms: 50 bytes a second, far below 1 KiB/s.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-answered:
					return
				case <-tick.C:
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		status, body := readStatus(t, conn)
		close(answered)
		if status != http.StatusRequestTimeout || !strings.Contains(body, "slower than 1024 bytes a second") {
			t.Errorf("a trickling body: status %d: %s", status, body)
		}
	})
	waitFor(t, "the bodies to be given back", func() bool { return g.heldBytes() == 0 })
	t.Run("at once", func(t *testing.T) {
		g, addr := rateGuard(t, defaultBodyGrace)
		body := paddedInitialize(50_000)
		conn := slowBody(t, addr, len(body), body)
		if status, answer := readStatus(t, conn); status != http.StatusOK {
			t.Errorf("a body sent at once: status %d: %s", status, answer)
		}
		waitFor(t, "the body to be given back", func() bool { return g.heldBytes() == 0 })
	})
}

func TestWithMinBodyRate(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want int64
		err  bool
	}{
		{n: 4096, want: 4096},
		{n: 0, want: 0},
		{n: -1, err: true},
	} {
		g := &guard{}
		err := WithMinBodyRate(tc.n)(g)
		if rate, _ := g.minRate(); (err != nil) != tc.err || (err == nil && rate != tc.want) {
			t.Errorf("WithMinBodyRate(%d): rate %d, error %v", tc.n, rate, err)
		}
	}
	if rate, grace := (&guard{}).minRate(); rate != DefaultMinBodyRate || grace != defaultBodyGrace {
		t.Errorf("defaults: %d bytes a second after %s", rate, grace)
	}
}

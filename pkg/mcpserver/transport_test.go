package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testToken is a token long enough to be accepted.
const testToken = "0123456789abcdef-test-token"

// httpResponseTimeout bounds one request of the raw HTTP tests: a server
// that hangs fails the test instead of blocking it.
const httpResponseTimeout = 20 * time.Second

// serveHTTP serves e's server over streamable HTTP on addr until the test
// ends, and returns it.
func serveHTTP(t *testing.T, e *env, addr, token string, opts ...HTTPOption) *HTTPServer {
	t.Helper()
	h, err := e.srv.ListenHTTP(addr, token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return h
}

// rawHTTP sends requests by hand, to see the status codes that an MCP
// client library would hide.
type rawHTTP struct {
	url   string
	token string
	c     *http.Client
}

func newRawHTTP(url, token string) *rawHTTP {
	return &rawHTTP{url: url, token: token, c: &http.Client{Timeout: httpResponseTimeout}}
}

type rawResponse struct {
	status  int
	header  http.Header
	body    string
	session string
}

// do sends method with body (nil for none) and the given headers; a
// header with an empty value is removed.
func (c *rawHTTP) do(t *testing.T, method string, body io.Reader, header map[string]string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, c.url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, c.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("%s %s: read the response: %v", method, c.url, err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: string(b), session: resp.Header.Get("Mcp-Session-Id")}
}

func (c *rawHTTP) post(t *testing.T, body string, header map[string]string) rawResponse {
	t.Helper()
	return c.do(t, "POST", strings.NewReader(body), header)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1"}}}`

const toolsListBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// initialize opens a session and returns its id.
func (c *rawHTTP) initialize(t *testing.T) string {
	t.Helper()
	r := c.post(t, initializeBody, nil)
	if r.status != http.StatusOK || r.session == "" {
		t.Fatalf("initialize: status %d, session %q: %s", r.status, r.session, r.body)
	}
	if r := c.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": r.session}); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d: %s", r.status, r.body)
	}
	return r.session
}

// toolsList lists the tools in session, and fails the test unless that
// works.
func (c *rawHTTP) toolsList(t *testing.T, session string) {
	t.Helper()
	r := c.post(t, toolsListBody, map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
	if r.status != http.StatusOK || !strings.Contains(r.body, "serial_sequence") {
		t.Fatalf("tools/list in session %s: status %d: %.300s", session, r.status, r.body)
	}
}

func TestHTTPOrigin(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "")
	c := newRawHTTP(h.URL(), "")
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"http://localhost:3000", http.StatusOK},
		{"http://LOCALHOST:3000", http.StatusOK},
		{"http://127.0.0.1", http.StatusOK},
		{"https://127.0.0.1:8443", http.StatusOK},
		{"http://[::1]:8080", http.StatusOK},
		{"https://evil.example", http.StatusForbidden},
		{"http://evil.example:" + portOf(t, h.Addr()), http.StatusForbidden},
		{"http://localhost.evil.example", http.StatusForbidden},
		{"http://127.0.0.1.evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"file://", http.StatusForbidden},
		{"not a url", http.StatusForbidden},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			r := c.post(t, initializeBody, map[string]string{"Origin": tc.origin})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if tc.want == http.StatusForbidden && !strings.Contains(r.body, "--allow-origin") {
				t.Errorf("the refusal does not say how to allow the origin: %s", r.body)
			}
		})
	}
	// A refused origin does not stop the server.
	c.toolsList(t, c.initialize(t))
}

// TestHTTPHost checks the defence against DNS rebinding: a page of another
// site whose name now resolves to 127.0.0.1 sends its own name as Host, and
// sends no Origin on a same-origin GET.
func TestHTTPHost(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "")
	c := newRawHTTP(h.URL(), "")
	port := portOf(t, h.Addr())
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"localhost", http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusForbidden},
		{"evil.example", http.StatusForbidden},
		{"127.0.0.1.evil.example:" + port, http.StatusForbidden},
	} {
		t.Run(tc.host, func(t *testing.T) {
			r := c.post(t, initializeBody, map[string]string{"Host": tc.host})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
		})
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// paddedInitialize is an initialize request of about n bytes.
func paddedInitialize(n int) string {
	pad := n - len(initializeBody)
	if pad < 0 {
		pad = 0
	}
	return strings.Replace(initializeBody, `"name":"raw-http"`, `"name":"raw-http`+strings.Repeat("x", pad)+`"`, 1)
}

// onlyReader hides everything but Read, so that the HTTP client does not
// know the length and sends the body in chunks.
type onlyReader struct{ io.Reader }

func TestHTTPBodyLimit(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", testToken)
	c := newRawHTTP(h.URL(), testToken)
	session := c.initialize(t)
	big := paddedInitialize(DefaultMaxBody + 1)

	t.Run("Content-Length above the limit", func(t *testing.T) {
		r := c.post(t, big, map[string]string{"Mcp-Session-Id": session})
		checkTooLarge(t, r)
		c.toolsList(t, session)
	})
	t.Run("chunked body above the limit", func(t *testing.T) {
		r := c.do(t, "POST", onlyReader{strings.NewReader(big)}, map[string]string{"Mcp-Session-Id": session})
		checkTooLarge(t, r)
		if n := h.guard.heldBytes(); n != 0 {
			t.Errorf("a refused body still holds %d bytes", n)
		}
		c.toolsList(t, session)
	})
	t.Run("at the limit", func(t *testing.T) {
		r := c.post(t, paddedInitialize(DefaultMaxBody), nil)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %.300s", r.status, r.body)
		}
	})
	t.Run("huge Content-Length is refused before the body is read", func(t *testing.T) {
		// Announce 1 GiB, send a few bytes and wait: a server that reads the
		// body before answering never answers.
		conn, err := net.Dial("tcp", h.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(httpResponseTimeout))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\":",
			EndpointPath, h.Addr(), testToken, 1<<30)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer before the body was sent: %v", err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		checkTooLarge(t, rawResponse{status: resp.StatusCode, body: string(b)})
		c.toolsList(t, session)
	})
}

func TestHTTPJSONItems(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "")
	c := newRawHTTP(h.URL(), "")
	session := c.initialize(t)
	call := func(steps string) rawResponse {
		return c.post(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"validate_sequence","arguments":{"content":"[]","x":[`+steps+`]}}}`,
			map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
	}
	// Well under --max-body, but each {} decodes into a map.
	r := call(strings.Repeat("{},", MaxJSONItems) + "{}")
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, fmt.Sprintf("at most %d JSON items", MaxJSONItems)) {
		t.Fatalf("status %d: %.300s", r.status, r.body)
	}
	if n := h.guard.heldBytes(); n != 0 {
		t.Errorf("a refused body still holds %d bytes", n)
	}
	c.toolsList(t, session)
	// Below the limit the call reaches the tool, which refuses the
	// argument it does not know.
	if r := call(strings.Repeat("{},", 1000) + "{}"); r.status != http.StatusOK || !strings.Contains(r.body, `unknown field \"x\"`) {
		t.Fatalf("status %d: %.300s", r.status, r.body)
	}
}

func TestCountJSONItems(t *testing.T) {
	for _, tc := range []struct {
		json string
		want int
	}{
		{`1`, 1},
		{`{}`, 2},
		{`[{},{},{}]`, 7},
		{`{"a":1,"b":[1,2]}`, 5},
		{`"{[,,,]}"`, 1},
		{`["\"{[,", {}]`, 4},
		{`["\\", {}]`, 4},
	} {
		if got, over := countJSONItems([]byte(tc.json), 100); got != tc.want || over {
			t.Errorf("%s: %d %v, want %d", tc.json, got, over, tc.want)
		}
	}
	if n, over := countJSONItems([]byte(strings.Repeat("[", 50)), 10); !over || n != 11 {
		t.Errorf("over the limit: %d %v", n, over)
	}
}

func checkTooLarge(t *testing.T, r rawResponse) {
	t.Helper()
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %.300s", r.status, r.body)
	}
	if want := fmt.Sprintf("%d bytes", DefaultMaxBody); !strings.Contains(r.body, want) || !strings.Contains(r.body, "--max-body") {
		t.Errorf("the answer does not name the limit (%s) and its flag: %s", want, r.body)
	}
}

func TestHTTPSessions(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "")
	c := newRawHTTP(h.URL(), "")
	session := c.initialize(t)
	c.toolsList(t, session)
	other := c.initialize(t)

	withSession := func(id string) map[string]string {
		return map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	}
	// A made-up id in the format the server uses, and one in no format.
	madeUp := "mcp-session-0b9e6f2c-5d3a-4c1e-9f7b-2a8d4e6c1f30"
	if strings.HasPrefix(session, "hilrun-") {
		madeUp = "hilrun-" + strings.Repeat("ab", (len(session)-len("hilrun-"))/2)
	}
	for _, tc := range []struct {
		name   string
		method string
		body   string
		header map[string]string
		want   int
	}{
		{"POST without a session", "POST", toolsListBody, nil, http.StatusBadRequest},
		{"POST with a made-up session", "POST", toolsListBody, withSession(madeUp), http.StatusNotFound},
		{"POST with a malformed session", "POST", toolsListBody, withSession("nope"), http.StatusNotFound},
		{"GET without a session", "GET", "", nil, http.StatusBadRequest},
		{"GET with a made-up session", "GET", "", withSession(madeUp), http.StatusNotFound},
		{"DELETE without a session", "DELETE", "", nil, http.StatusBadRequest},
		{"DELETE with a made-up session", "DELETE", "", withSession(madeUp), http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := c.do(t, tc.method, body, tc.header)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %.300s", r.status, tc.want, r.body)
			}
		})
	}

	t.Run("DELETE ends the session", func(t *testing.T) {
		// A GET stream of the session is open: it ends with the session.
		req, _ := http.NewRequest("GET", h.URL(), nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: status %d", resp.StatusCode)
		}
		streamEnded := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, resp.Body); streamEnded <- err }()

		if r := c.do(t, "DELETE", nil, withSession(session)); r.status != http.StatusOK {
			t.Fatalf("DELETE: status %d: %s", r.status, r.body)
		}
		for _, m := range []string{"POST", "GET", "DELETE"} {
			var body io.Reader
			if m == "POST" {
				body = strings.NewReader(toolsListBody)
			}
			if r := c.do(t, m, body, withSession(session)); r.status != http.StatusNotFound {
				t.Errorf("%s after DELETE: status %d, want 404: %.300s", m, r.status, r.body)
			}
		}
		select {
		case <-streamEnded:
		case <-time.After(httpResponseTimeout):
			t.Errorf("the session's GET stream is still open %s after DELETE", httpResponseTimeout)
		}
		// Other sessions go on.
		c.toolsList(t, other)
	})
}

func TestHTTPBearerScheme(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", testToken)
	c := newRawHTTP(h.URL(), "")
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"Bearer " + testToken, http.StatusOK},
		{"bearer " + testToken, http.StatusOK},
		{"BEARER " + testToken, http.StatusOK},
		{"bEaReR " + testToken, http.StatusOK},
		{"Bearer  " + testToken, http.StatusOK},
		{"", http.StatusUnauthorized},
		{"Bearer", http.StatusUnauthorized},
		{"Bearer ", http.StatusUnauthorized},
		{"Bearer" + testToken, http.StatusUnauthorized},
		{"Basic " + testToken, http.StatusUnauthorized},
		{"Bearer " + testToken + "x", http.StatusUnauthorized},
		{"Bearer " + testToken[:len(testToken)-1], http.StatusUnauthorized},
		{"Bearer " + strings.ToUpper(testToken), http.StatusUnauthorized},
	} {
		t.Run(tc.auth, func(t *testing.T) {
			r := c.post(t, initializeBody, map[string]string{"Authorization": tc.auth})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
		})
	}
}

func TestHTTPWeakToken(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tc := range []struct{ name, token, want string }{
		{"blank", "   ", "blank"},
		{"tab and newline", "\t\n", "blank"},
		{"short", "s3cret", "has 6 characters, a secret needs at least 16"},
		{"short with blanks around", "   s3cret        ", "blank"},
		{"inner blank", "0123456789 abcdef", "blank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
				h, err := e.srv.ListenHTTP(addr, tc.token)
				if err == nil {
					h.Close()
				}
				if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want a refusal that says %q", addr, err, tc.want)
				}
			}
		})
	}
	h, err := e.srv.ListenHTTP("127.0.0.1:0", testToken)
	if err != nil {
		t.Fatalf("a good token: %v", err)
	}
	h.Close()
}

func TestHTTPAllowOrigin(t *testing.T) {
	e := newEnv(t, envOptions{})
	t.Run("loopback bind", func(t *testing.T) {
		h := serveHTTP(t, e, "127.0.0.1:0", "", WithAllowOrigins("https://Lab.Example.com:443/", "http://10.0.0.7:8080"))
		c := newRawHTTP(h.URL(), "")
		for _, tc := range []struct {
			origin string
			want   int
		}{
			{"https://lab.example.com", http.StatusOK},
			{"http://10.0.0.7:8080", http.StatusOK},
			{"http://localhost:3000", http.StatusOK},
			{"http://lab.example.com", http.StatusForbidden},
			{"https://lab.example.com:8443", http.StatusForbidden},
			{"http://10.0.0.7", http.StatusForbidden},
			{"https://evil.example", http.StatusForbidden},
		} {
			if r := c.post(t, initializeBody, map[string]string{"Origin": tc.origin}); r.status != tc.want {
				t.Errorf("Origin %s: status %d, want %d: %s", tc.origin, r.status, tc.want, r.body)
			}
		}
	})
	t.Run("all interfaces", func(t *testing.T) {
		// Serving beyond this machine, pages on localhost are foreign too:
		// only --allow-origin lets a browser in.
		h := serveHTTP(t, e, "0.0.0.0:0", testToken, WithAllowOrigins("https://lab.example.com"))
		c := newRawHTTP("http://127.0.0.1:"+portOf(t, h.Addr())+EndpointPath, testToken)
		for _, tc := range []struct {
			origin string
			want   int
		}{
			{"", http.StatusOK},
			{"https://lab.example.com", http.StatusOK},
			{"http://localhost:3000", http.StatusForbidden},
			{"http://127.0.0.1:3000", http.StatusForbidden},
		} {
			if r := c.post(t, initializeBody, map[string]string{"Origin": tc.origin}); r.status != tc.want {
				t.Errorf("Origin %q: status %d, want %d: %s", tc.origin, r.status, tc.want, r.body)
			}
		}
	})
	t.Run("bad origins", func(t *testing.T) {
		for _, o := range []string{"", "*", "null", "lab.example.com", "ftp://lab.example.com", "https://lab.example.com/path", "https://user@lab.example.com", "https://lab.example.com?q=1", "https://"} {
			h, err := e.srv.ListenHTTP("127.0.0.1:0", "", WithAllowOrigins(o))
			if err == nil {
				h.Close()
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--allow-origin") || !strings.Contains(err.Error(), "is not an origin") {
				t.Errorf("--allow-origin %q: %v", o, err)
			}
		}
	})
}

func TestHTTPMaxBodyRaised(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "", WithMaxBody(2*DefaultMaxBody))
	c := newRawHTTP(h.URL(), "")
	if r := c.post(t, paddedInitialize(DefaultMaxBody+1000), nil); r.status != http.StatusOK {
		t.Fatalf("a body above the default limit: status %d: %.300s", r.status, r.body)
	}
	r := c.post(t, paddedInitialize(2*DefaultMaxBody+1), nil)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, fmt.Sprintf("at most %d bytes", 2*DefaultMaxBody)) {
		t.Fatalf("a body above the raised limit: status %d: %.300s", r.status, r.body)
	}
	for _, n := range []int64{0, -1} {
		if _, err := e.srv.ListenHTTP("127.0.0.1:0", "", WithMaxBody(n)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--max-body") {
			t.Errorf("--max-body %d: %v", n, err)
		}
	}
}

// TestHTTPBodyTimeout checks that a client that stops in the middle of a
// body gets 408 rather than holding the request open.
func TestHTTPBodyTimeout(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	h, err := e.srv.ListenHTTP("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	h.guard.bodyTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Serve(ctx)
	conn, err := net.Dial("tcp", h.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(httpResponseTimeout))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":", EndpointPath, h.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	// The deadline was for that body only: a tool call that takes longer
	// than it still gets its answer.
	c := newRawHTTP(h.URL(), "")
	session := c.initialize(t)
	r := c.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"serial_sequence","arguments":{"steps":[{"delay_ms":600}]}}}`, map[string]string{"Mcp-Session-Id": session})
	if r.status != http.StatusOK || !strings.Contains(r.body, `"passed":true`) {
		t.Fatalf("a call after the timeout: status %d: %.300s", r.status, r.body)
	}
}

func TestSessionTableBound(t *testing.T) {
	tab := newSessionTable(3)
	a, b := tab.Generate(), tab.Generate()
	if a == b || !strings.HasPrefix(a, sessionIDPrefix) || len(a) != len(sessionIDPrefix)+32 {
		t.Fatalf("ids %q %q", a, b)
	}
	tab.known(a) // a is now used more recently than b
	c, d := tab.Generate(), tab.Generate()
	if tab.len() != 3 {
		t.Errorf("%d sessions, want 3", tab.len())
	}
	if tab.known(b) {
		t.Errorf("the least recently used session was not forgotten")
	}
	for _, id := range []string{a, c, d} {
		if _, err := tab.Validate(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	tab.Terminate(c)
	if _, err := tab.Validate(c); err == nil {
		t.Errorf("a terminated session is still valid")
	}
	if tab.len() != 2 {
		t.Errorf("%d sessions, want 2", tab.len())
	}
}

// TestHTTPHeldBodies checks that the bodies that requests in flight hold
// are bounded: past heldBodiesFactor times the body limit, a request gets
// 503, and once calls have ended requests get through again.
func TestHTTPHeldBodies(t *testing.T) {
	const maxBody = 1000
	release := make(chan struct{})
	entered := make(chan struct{}, heldBodiesFactor)
	g := &guard{
		origins: map[string]bool{}, maxBody: maxBody, bodyTimeout: time.Minute, sessions: newSessionTable(0),
		// A long tool call: it holds its request until released.
		next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
		}),
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	c := newRawHTTP(srv.URL, "")
	body := paddedInitialize(maxBody)
	done := make(chan int, heldBodiesFactor)
	for range heldBodiesFactor {
		go func() {
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for range heldBodiesFactor {
		<-entered
	}
	for _, tc := range []struct {
		name string
		body io.Reader
	}{
		{"Content-Length", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)},
		{"chunked", onlyReader{strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)}},
	} {
		r := c.do(t, "POST", tc.body, nil)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, fmt.Sprintf("at most %d (%d times --max-body)", heldBodiesFactor*maxBody, heldBodiesFactor)) {
			t.Errorf("%s: a request past the held bodies: status %d: %s", tc.name, r.status, r.body)
		}
	}
	close(release)
	for range heldBodiesFactor {
		if status := <-done; status != http.StatusOK {
			t.Errorf("a held request: status %d", status)
		}
	}
	waitFor(t, "the held bodies to be given back", func() bool { return g.heldBytes() == 0 })
	if r := c.post(t, body, nil); r.status != http.StatusOK {
		t.Errorf("after the calls ended: status %d: %s", r.status, r.body)
	}
	if r := c.do(t, "POST", onlyReader{strings.NewReader(body)}, nil); r.status != http.StatusOK || g.heldBytes() != 0 {
		t.Errorf("a chunked body after the calls ended: status %d, %d bytes held: %s", r.status, g.heldBytes(), r.body)
	}
}

// A page of an allowed origin can use the server from a browser: its
// preflight is answered without the token, and answers name the origin.
func TestHTTPCORS(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "0.0.0.0:0", testToken, WithAllowOrigins("https://lab.example.com"))
	url := "http://127.0.0.1:" + portOf(t, h.Addr()) + EndpointPath
	do := func(method, origin, token string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(initializeBody))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	pre := do(http.MethodOptions, "https://lab.example.com", "")
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "https://lab.example.com" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight of an allowed origin: %d %v", pre.StatusCode, pre.Header)
	}
	if r := do(http.MethodOptions, "https://evil.example", ""); r.StatusCode != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of a foreign origin: %d %v", r.StatusCode, r.Header)
	}
	post := do(http.MethodPost, "https://lab.example.com", testToken)
	if post.StatusCode != http.StatusOK || post.Header.Get("Access-Control-Allow-Origin") != "https://lab.example.com" ||
		!strings.Contains(post.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("request of an allowed origin: %d %v", post.StatusCode, post.Header)
	}
	if r := do(http.MethodPost, "https://lab.example.com", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("request of an allowed origin without the token: %d, want 401", r.StatusCode)
	}
}

// A session that goes the idle time without a request ends as DELETE ends
// it: its context is cancelled and the server is told (its leases drop).
// One with a request in flight does not idle out.
func TestSessionTableIdle(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tab := newSessionTable(10)
	tab.idle = time.Minute
	tab.now = func() time.Time { return now }
	var ended []string
	tab.ended = func(id string) { ended = append(ended, id) }
	a, b, c := tab.Generate(), tab.Generate(), tab.Generate()
	actx, bctx := tab.lookup(a), tab.lookup(b)
	now = now.Add(30 * time.Second)
	tab.known(b)
	cctx := tab.enter(c) // a request of c in flight
	now = now.Add(45 * time.Second)
	tab.sweep()
	if strings.Join(ended, " ") != a || actx.Err() == nil || bctx.Err() != nil || cctx.Err() != nil {
		t.Fatalf("after a's idle time: ended %v, contexts %v %v %v", ended, actx.Err(), bctx.Err(), cctx.Err())
	}
	if tab.known(a) {
		t.Error("an idled-out session is still known")
	}
	now = now.Add(time.Hour)
	tab.sweep() // b idles out; c's request is still in flight
	if tab.known(b) || tab.len() != 1 {
		t.Fatalf("after b's idle time: ended %v, %d sessions", ended, tab.len())
	}
	tab.leave(c)
	now = now.Add(59 * time.Second)
	if !tab.known(c) {
		t.Fatal("c idled out before its idle time from the end of its request")
	}
}

// Past the bound, a session that overflows the table (initializes that
// passed the guard together) ends the least recently used one, cancelling
// its context.
func TestSessionTableOverflowCancels(t *testing.T) {
	tab := newSessionTable(1)
	a := tab.Generate()
	actx := tab.lookup(a)
	if !tab.full() {
		t.Fatal("a table at its bound is not full")
	}
	tab.Generate()
	if actx.Err() == nil {
		t.Error("the forgotten session's context goes on")
	}
}

// Past its bound of sessions the server refuses initialize with 503 rather
// than forgetting live sessions; once one ends, a new one may start.
func TestHTTPSessionBound(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := serveHTTP(t, e, "127.0.0.1:0", "", WithSessions(2, time.Hour))
	c := newRawHTTP(h.URL(), "")
	a := c.initialize(t)
	b := c.initialize(t)
	r := c.post(t, initializeBody, nil)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "already has 2 sessions, its limit") {
		t.Fatalf("initialize past the bound: status %d: %s", r.status, r.body)
	}
	c.toolsList(t, a)
	c.toolsList(t, b)
	if r := c.do(t, "DELETE", nil, map[string]string{"Mcp-Session-Id": a}); r.status != http.StatusOK {
		t.Fatalf("DELETE: status %d: %s", r.status, r.body)
	}
	c.toolsList(t, c.initialize(t))
	if _, err := e.srv.ListenHTTP("127.0.0.1:0", "", WithSessions(0, time.Hour)); err == nil {
		t.Error("WithSessions(0, …) accepted")
	}
}

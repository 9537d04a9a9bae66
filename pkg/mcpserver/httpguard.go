package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultMaxBody is the largest HTTP request body, in bytes, that the
// streamable HTTP endpoint reads unless WithMaxBody says otherwise: 4 MiB.
// A larger body gets 413 without being read.
const DefaultMaxBody = 4 << 20

// MaxJSONItems is the most JSON items, objects, arrays and commas outside
// strings, that a request body may hold: between one and two per value.
// Decoded, a value costs far more memory than its few bytes of text (4 MiB
// of "{}," takes hundreds of MB), so a body with more gets 413.
const MaxJSONItems = 100_000

// heldBodiesFactor times the body limit is the most bytes of request
// bodies that the requests in flight may hold together: past it, a request
// gets 503 rather than memory growing with the number of clients.
const heldBodiesFactor = 8

// MinTokenLength is the fewest characters a bearer token may have: a
// shorter one can be guessed.
const MinTokenLength = 16

// defaultBodyTimeout bounds reading one request body, so that a client
// that stops sending in the middle of a body does not hold the request
// forever.
const defaultBodyTimeout = time.Minute

// CheckToken refuses a bearer token that cannot be a secret: blank, with
// blanks or control characters in it (it would not survive an HTTP
// header), or shorter than MinTokenLength characters.
func CheckToken(token string) error {
	const hint = "make one with: openssl rand -hex 16"
	if strings.TrimSpace(token) == "" {
		return fmt.Errorf("the bearer token is blank; %s", hint)
	}
	if strings.IndexFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("the bearer token has blanks or control characters in it; %s", hint)
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLength {
		return fmt.Errorf("the bearer token has %d characters, a secret needs at least %d; %s", n, MinTokenLength, hint)
	}
	return nil
}

// ParseOrigin checks a browser origin such as https://lab.example.com or
// http://localhost:5173 and returns it in the form browsers send:
// scheme and host in lower case, without a default port or trailing slash.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%q is not an origin: want SCHEME://HOST[:PORT] with scheme http or https, like https://lab.example.com", s)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return u.Scheme + "://" + host, nil
}

// guard is what every request to the streamable HTTP endpoint passes
// before the MCP transport sees it: DNS rebinding and Origin checks, the
// bearer token, the body size limit and the session rules of the MCP
// specification.
type guard struct {
	next http.Handler
	// token is the SHA-256 of the bearer token, nil when none is needed.
	// Comparing digests takes the same time whatever the length of what a
	// client sent.
	token []byte
	// loopbackOrigins lets browser origins on this machine in: the server
	// only listens on loopback.
	loopbackOrigins bool
	// origins are the origins allowed by --allow-origin, as ParseOrigin
	// returns them.
	origins     map[string]bool
	maxBody     int64
	bodyTimeout time.Duration
	// bodyRate and bodyGrace are the slowest a request body may arrive,
	// in bytes a second, once bodyGrace has passed since it began; 0
	// means DefaultMinBodyRate and defaultBodyGrace, a negative rate no
	// limit (WithMinBodyRate).
	bodyRate  int64
	bodyGrace time.Duration
	sessions  *sessionTable
	// callEnded tells when a tool call in flight has ended (see
	// Server.callEnded); nil in tests of the guard alone.
	callEnded func(session string, id any) <-chan struct{}

	mu sync.Mutex
	// held is the bytes of request bodies that requests in flight hold;
	// a long tool call holds its body until it answers.
	held int64
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := g.checkHost(r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	if msg := g.checkOrigin(r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		// An allowed page: tell its browser so (CORS), and answer its
		// preflight, which carries no token.
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hilrun"`)
		http.Error(w, "401 unauthorized: this hilrun MCP endpoint needs Authorization: Bearer <token>", http.StatusUnauthorized)
		return
	}
	var body []byte
	if r.Method == http.MethodPost {
		var release func()
		if body, release = g.admitBody(w, r); release == nil {
			return
		}
		defer release()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	status, msg, sess := g.checkSession(r, body)
	if status != 0 {
		http.Error(w, msg, status)
		return
	}
	if sess != nil {
		defer g.sessions.leave(r.Header.Get(server.HeaderKeySessionID))
	}
	if sess != nil && g.callEnded != nil {
		w = g.ackCancellation(w, r, body)
	}
	if sess != nil && r.Method != http.MethodDelete {
		// Deleting the session ends this request too.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(sess, cancel)()
		if r.Method == http.MethodPost {
			// A tool call's progress goes down its own response.
			o := &httpOut{w: w}
			w, ctx = o, withOutbox(withHTTPSession(ctx, r.Header.Get(server.HeaderKeySessionID)), o)
		}
		r = r.WithContext(ctx)
	}
	g.next.ServeHTTP(w, r)
}

// ackCancellation holds back the 202 that acknowledges a
// notifications/cancelled until the cancelled call has ended and released
// its ports and probes (at most cancelledHoldWait): a call the client
// makes once its cancellation is acknowledged never finds them busy.
func (g *guard) ackCancellation(w http.ResponseWriter, r *http.Request, body []byte) http.ResponseWriter {
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if r.Method != http.MethodPost || json.Unmarshal(body, &m) != nil ||
		m.Method != string(mcp.MethodNotificationCancelled) || m.Params.RequestID == nil {
		return w
	}
	done := g.callEnded(r.Header.Get(server.HeaderKeySessionID), m.Params.RequestID)
	if done == nil {
		return w
	}
	return &ackAfter{ResponseWriter: w, done: done, ctx: r.Context()}
}

// ackAfter writes its status once done is closed.
type ackAfter struct {
	http.ResponseWriter
	done <-chan struct{}
	ctx  context.Context
}

func (a *ackAfter) WriteHeader(code int) {
	t := time.NewTimer(cancelledHoldWait)
	defer t.Stop()
	select {
	case <-a.done:
	case <-t.C:
	case <-a.ctx.Done():
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *ackAfter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// checkHost refuses, on a connection to a loopback address, a Host header
// that names something else. That is DNS rebinding: a web page whose own
// name was made to resolve to 127.0.0.1 talking to this server from the
// browser, with its own name as Host and, on a GET, no Origin at all.
func (g *guard) checkHost(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	lhost, _, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopback(lhost) {
		return ""
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if isLoopback(host) {
		return ""
	}
	return fmt.Sprintf("403 forbidden: Host %q is not a name of this machine, on a connection over loopback (DNS rebinding protection): use localhost, 127.0.0.1 or [::1]", clip(r.Host))
}

// checkOrigin refuses requests that a browser sent for a page of an origin
// that is not allowed. Requests without Origin, from programs rather than
// browsers, pass.
func (g *guard) checkOrigin(r *http.Request) string {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return ""
	}
	if len(vals) == 1 {
		o, err := ParseOrigin(vals[0])
		if err == nil && g.origins[o] {
			return ""
		}
		if err == nil && g.loopbackOrigins {
			u, _ := url.Parse(o)
			if isLoopback(u.Hostname()) {
				return ""
			}
		}
	}
	return fmt.Sprintf("403 forbidden: Origin %q is not allowed by this hilrun MCP server; start it with --allow-origin ORIGIN to let pages of that origin in", clip(strings.Join(vals, ", ")))
}

// authorized reports whether r carries the bearer token, when one is
// needed. The scheme name is case-insensitive (RFC 9110, section 11.1).
func (g *guard) authorized(r *http.Request) bool {
	if g.token == nil {
		return true
	}
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimLeft(cred, " ")))
	return subtle.ConstantTimeCompare(got[:], g.token) == 1
}

// checkSession applies the session rules of the streamable HTTP transport:
// after initialize, every request carries the session id the server handed
// out (400 without one), and an id that is unknown or was deleted gets 404.
// It returns the status and message of a refusal, or 0 and the context
// of the request's session (nil when it has none).
//
// Protocol versions from 2026-07-28 on have no sessions; their requests
// are left to the transport, which refuses them with the versions this
// server serves (ProtocolVersions), so that the client falls back to
// initialize.
func (g *guard) checkSession(r *http.Request, body []byte) (status int, msg string, sess context.Context) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return 0, "", nil
	}
	switch r.Method {
	case http.MethodPost:
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta *mcp.Meta `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil {
			return 0, "", nil // the transport answers with a JSON-RPC parse error
		}
		if mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion()) {
			return 0, "", nil
		}
		if m.Method == string(mcp.MethodInitialize) {
			if g.sessions.full() {
				return http.StatusServiceUnavailable, fmt.Sprintf("503 busy: this hilrun MCP server already has %d sessions, its limit; end one with DELETE, or wait until one has gone %s without a request, then initialize again", g.sessions.max, g.sessions.idle), nil
			}
			return 0, "", nil
		}
	case http.MethodGet, http.MethodDelete:
	default:
		return 0, "", nil
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		return http.StatusBadRequest, fmt.Sprintf("400 bad request: %s needs the %s header that initialize returned; send initialize first to start a session", r.Method, server.HeaderKeySessionID), nil
	}
	sess = g.sessions.enter(id)
	if sess == nil {
		return http.StatusNotFound, fmt.Sprintf("404 not found: session %q is unknown or has ended; send initialize to start a new one", clip(id)), nil
	}
	return 0, "", sess
}

// clip shortens what a client sent to quote it in an answer.
func clip(s string) string {
	const max = 100
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// countJSONItems counts the JSON items in data: one, plus one per '{', '['
// and ',' outside strings. It stops at the first count above max and
// reports whether it got there. data need not be valid JSON: the decoder
// says what is wrong with it.
func countJSONItems(data []byte, max int) (n int, over bool) {
	n = 1
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[' || c == ',':
			n++
			if n > max {
				return n, true
			}
		}
	}
	return n, false
}

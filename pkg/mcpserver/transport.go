package mcpserver

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves one client over in and out until in ends or ctx is
// cancelled. out carries nothing but JSON-RPC; log lines go to the
// server's Log.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(log.New(s.cfg.Log, "hilrun mcp: ", log.LstdFlags))
	o := newStdioOut(out)
	st.SetContextFunc(func(ctx context.Context) context.Context {
		return withStdioSession(withOutbox(server.WithSupportedProtocolVersions(ctx, ProtocolVersions), o))
	})
	s.logf("serving MCP on standard input and output")
	w := &cancelWatch{r: in, cancelled: func(id any) { s.cancelArrived(stdioSession, id) }}
	return st.Listen(ctx, w, o)
}

// ProtocolVersions are the MCP protocol versions hilrun serves, newest
// first: those with the initialize handshake and sessions, up to
// 2025-11-25. server/discover offers only these, so a client that tries
// 2026-07-28 first (the Go SDK does) falls back to initialize. That
// version's stateless rules (per-request _meta on every message, no
// sessions) are not what the session checks, cancellation and progress
// delivery of this server are built on: over HTTP the transport refused
// the Go SDK's notifications/cancelled, which carries no _meta, and the
// client lost its session.
var ProtocolVersions = mcp.LegacyProtocolVersions()

// EndpointPath is where the streamable HTTP transport is served.
const EndpointPath = "/mcp"

// HTTPServer is a bound streamable HTTP endpoint.
type HTTPServer struct {
	ln     net.Listener
	srv    *http.Server
	stream *server.StreamableHTTPServer
	guard  *guard
	s      *Server
}

// isLoopback reports whether host (from host:port) only reaches this
// machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// HTTPOption configures ListenHTTP.
type HTTPOption func(*guard) error

// WithAllowOrigins lets browser pages of these origins (as --allow-origin
// takes them, see ParseOrigin) use the endpoint. Requests with any other
// Origin header get 403, except origins on this machine when the server
// listens on loopback only.
func WithAllowOrigins(origins ...string) HTTPOption {
	return func(g *guard) error {
		for _, o := range origins {
			norm, err := ParseOrigin(o)
			if err != nil {
				return fmt.Errorf("--allow-origin: %w", err)
			}
			g.origins[norm] = true
		}
		return nil
	}
}

// WithSessions sets how many streamable HTTP sessions the server keeps at
// once (default DefaultMaxSessions; past it initialize gets 503) and how
// long one lives without a request (default DefaultSessionIdle).
func WithSessions(max int, idle time.Duration) HTTPOption {
	return func(g *guard) error {
		if max <= 0 || idle <= 0 {
			return fmt.Errorf("sessions: want at least one session and an idle timeout above 0, found %d and %s", max, idle)
		}
		g.sessions.max, g.sessions.idle = max, idle
		return nil
	}
}

// WithMaxBody sets the largest request body in bytes (default
// DefaultMaxBody); larger ones get 413.
func WithMaxBody(n int64) HTTPOption {
	return func(g *guard) error {
		if n <= 0 {
			return fmt.Errorf("--max-body %d: want a number of bytes above 0", n)
		}
		g.maxBody = n
		return nil
	}
}

// ListenHTTP binds addr exactly (no hunting for a free port: a bind that
// fails is an error) for streamable HTTP at /mcp. A non-loopback address
// requires token, and a token must pass CheckToken; when token is set every
// request must carry "Authorization: Bearer TOKEN", else it gets 401.
//
// Every request also passes the checks of the MCP specification: an Origin
// header that is not allowed gets 403, and so does, on loopback, a Host
// header that is not a loopback name (DNS rebinding); a body over the
// limit or with more than MaxJSONItems gets 413, and one past what the
// requests in flight may hold together 503; a request other than
// initialize without a session id gets 400, and one with an unknown or
// deleted session id 404. DELETE ends a session and its requests in
// flight; so does going DefaultSessionIdle without a request. Past
// DefaultMaxSessions live sessions, initialize gets 503 (WithSessions).
func (s *Server) ListenHTTP(addr, token string, opts ...HTTPOption) (*HTTPServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: want HOST:PORT, like 127.0.0.1:4123: %w", addr, err)
	}
	if !isLoopback(host) && token == "" {
		return nil, refused("--http %s: serving beyond this machine needs a bearer token: pass --token or set HILRUN_MCP_TOKEN (or bind 127.0.0.1)", addr)
	}
	g := &guard{
		loopbackOrigins: isLoopback(host),
		origins:         make(map[string]bool),
		maxBody:         DefaultMaxBody,
		bodyTimeout:     defaultBodyTimeout,
		sessions:        newSessionTable(DefaultMaxSessions),
		callEnded:       s.cancelArrived,
	}
	g.sessions.ended = s.sessionEnded
	if token != "" {
		if err := CheckToken(token); err != nil {
			return nil, refused("%v", err)
		}
		sum := sha256.Sum256([]byte(token))
		g.token = sum[:]
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, refused("%v", err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	h := &HTTPServer{ln: ln, s: s, guard: g}
	h.stream = server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath(EndpointPath),
		server.WithSessionIdManager(g.sessions),
		server.WithStreamableHTTPProtocolVersions(ProtocolVersions...),
	)
	g.next = h.stream
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, g)
	h.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(s.cfg.Log, "hilrun mcp: http: ", log.LstdFlags),
	}
	return h, nil
}

// Addr is the bound address.
func (h *HTTPServer) Addr() string { return h.ln.Addr().String() }

// URL is the endpoint's URL.
func (h *HTTPServer) URL() string { return "http://" + h.Addr() + EndpointPath }

// Serve serves until ctx is cancelled, then shuts down within a few
// seconds.
func (h *HTTPServer) Serve(ctx context.Context) error {
	h.s.logf("serving MCP at %s", h.URL())
	errc := make(chan error, 1)
	go func() { errc <- h.srv.Serve(h.ln) }()
	// Sessions idle out even when no request comes to notice it.
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go func() {
		tk := time.NewTicker(max(h.guard.sessions.idle/4, time.Second))
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				h.guard.sessions.sweep()
			case <-sweepCtx.Done():
				return
			}
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	h.stream.Shutdown(sctx)
	err := h.srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		h.srv.Close()
	}
	return nil
}

// Close stops serving at once.
func (h *HTTPServer) Close() error { return h.srv.Close() }

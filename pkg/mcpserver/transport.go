package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves one client over in and out until in ends or ctx is
// cancelled. out carries nothing but JSON-RPC; log lines go to the
// server's Log.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	st := server.NewStdioServer(s.mcp)
	st.SetErrorLogger(log.New(s.cfg.Log, "hilrun mcp: ", log.LstdFlags))
	s.logf("serving MCP on standard input and output")
	return st.Listen(ctx, in, out)
}

// EndpointPath is where the streamable HTTP transport is served.
const EndpointPath = "/mcp"

// HTTPServer is a bound streamable HTTP endpoint.
type HTTPServer struct {
	ln     net.Listener
	srv    *http.Server
	stream *server.StreamableHTTPServer
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

// ListenHTTP binds addr exactly (no hunting for a free port: a bind that
// fails is an error) for streamable HTTP at /mcp. A non-loopback address
// requires token; when token is set every request must carry
// "Authorization: Bearer TOKEN", else it gets 401.
func (s *Server) ListenHTTP(addr, token string) (*HTTPServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: want HOST:PORT, like 127.0.0.1:4123: %w", addr, err)
	}
	if !isLoopback(host) && token == "" {
		return nil, refused("--http %s: serving beyond this machine needs a bearer token: pass --token or set HILRUN_MCP_TOKEN (or bind 127.0.0.1)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	h := &HTTPServer{ln: ln, s: s}
	h.stream = server.NewStreamableHTTPServer(s.mcp, server.WithEndpointPath(EndpointPath))
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, requireToken(token, h.stream))
	h.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
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

// requireToken answers 401 to requests without the bearer token; an empty
// token lets everything through.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hilrun"`)
			http.Error(w, "401 unauthorized: this hilrun MCP endpoint needs Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// callBeat keeps a tool call with a progress token alive for clients whose
// timeout restarts on progress (the TypeScript SDK's resetTimeoutOnProgress;
// its default timeout is 60 s, serial_expect waits up to 120 s): every
// heartbeat interval without news it sends a progress notification, until
// the call ends or a sequence claims the token for its own progress.
type callBeat struct {
	ctx      context.Context
	out      outbox
	srv      *server.MCPServer
	token    mcp.ProgressToken
	tool     string
	start    time.Time
	interval time.Duration

	mu      sync.Mutex
	beats   int
	quit    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type beatKey struct{}

// startBeat starts the heartbeat of a call, or returns nil when the call
// has no progress token.
func (s *Server) startBeat(ctx context.Context, req mcp.CallToolRequest) *callBeat {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	b := &callBeat{
		ctx: ctx, out: outboxOf(ctx), srv: server.ServerFromContext(ctx),
		token: req.Params.Meta.ProgressToken, tool: req.Params.Name, start: time.Now(),
		interval: s.cfg.Heartbeat, quit: make(chan struct{}), stopped: make(chan struct{}),
	}
	if b.interval <= 0 {
		b.interval = DefaultHeartbeat
	}
	if b.out == nil && b.srv == nil {
		return nil
	}
	go b.loop()
	return b
}

func withBeat(ctx context.Context, b *callBeat) context.Context {
	return context.WithValue(ctx, beatKey{}, b)
}

func (b *callBeat) loop() {
	defer close(b.stopped)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-b.quit:
			return
		}
		b.mu.Lock()
		b.beats++
		// Progress must grow with every notification; fractions leave
		// room for the counts of a sequence that claims the token.
		n := float64(b.beats) / float64(b.beats+1)
		b.mu.Unlock()
		sendProgress(b.ctx, b.out, b.srv, map[string]any{
			"progressToken": b.token, "progress": n,
			"message": fmt.Sprintf("%s running %s", b.tool, fmtDur(time.Since(b.start))),
		})
	}
}

// stop ends the heartbeat and returns how many it sent; once it returns,
// it sends no more.
func (b *callBeat) stop() int {
	if b == nil {
		return 0
	}
	b.once.Do(func() { close(b.quit) })
	<-b.stopped
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.beats
}

// claimBeat stops the heartbeat of the call behind ctx, whose progress a
// sequence now sends, and returns how many heartbeats it sent.
func claimBeat(ctx context.Context) int {
	b, _ := ctx.Value(beatKey{}).(*callBeat)
	return b.stop()
}

// sendProgress sends a notifications/progress for the call behind ctx:
// through the outbox of its stream, written when it returns, or else
// through mcp-go. Nothing is sent once the call is cancelled: the client
// has forgotten it and would take the notification for a stray message.
func sendProgress(ctx context.Context, out outbox, srv *server.MCPServer, params map[string]any) {
	if ctx.Err() != nil {
		return
	}
	if out != nil {
		// An error means the client is gone: nothing to tell it.
		out.notify(mcp.JSONRPCNotification{
			JSONRPC:      mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{Method: "notifications/progress", Params: mcp.NotificationParams{AdditionalFields: params}},
		})
		return
	}
	srv.SendNotificationToClient(ctx, "notifications/progress", params)
}

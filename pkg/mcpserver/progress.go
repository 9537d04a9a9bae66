package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// progress sends notifications/progress when the client passed a progress
// token: one when steps finish (or, in a sequence that builds, when the
// tool prints lines), at most one per progressInterval with the latest
// news, and a heartbeat when a step has run for heartbeat without news, so
// that a client whose timeout restarts on progress does not give up on a
// long delay or expect. It sends from its own goroutine, so a slow client
// never slows the run, and stop sends the last news and returns once
// everything is written: no progress comes after the result.
type progress struct {
	srv   *server.MCPServer
	ctx   context.Context
	out   outbox
	token mcp.ProgressToken
	total int
	// lines is set when the sequence builds or uploads: each line a tool
	// prints counts as progress too, and the total is unknown.
	lines     bool
	interval  time.Duration
	heartbeat time.Duration

	mu      sync.Mutex
	done    int
	events  int
	message string
	dirty   bool
	// beats counts heartbeats since the last news; each adds a fraction
	// to the progress, which must grow with every notification.
	beats int
	// running are the steps started and not finished, innermost last.
	running []runningStep
	wake    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
}

type runningStep struct {
	st    *runner.StepResult
	start time.Time
}

// progressInterval spaces notifications about steps; buildProgressInterval
// those of a sequence that builds, which may print thousands of lines.
const (
	progressInterval      = 50 * time.Millisecond
	buildProgressInterval = 100 * time.Millisecond
)

// DefaultHeartbeat is how long a call with a progress token goes at most
// without a progress notification while a step runs, unless
// Config.Heartbeat says otherwise.
const DefaultHeartbeat = 5 * time.Second

func (s *Server) newProgress(ctx context.Context, req mcp.CallToolRequest, seq *steps.Sequence) *progress {
	p := &progress{srv: server.ServerFromContext(ctx), ctx: ctx, out: outboxOf(ctx), interval: progressInterval, heartbeat: s.cfg.Heartbeat}
	if p.heartbeat <= 0 {
		p.heartbeat = DefaultHeartbeat
	}
	if req.Params.Meta != nil {
		p.token = req.Params.Meta.ProgressToken
	}
	if p.token == nil || (p.srv == nil && p.out == nil) {
		return p
	}
	// The call's own heartbeat stops here; the sequence's goes on from
	// where it was, so that progress keeps growing.
	p.beats = claimBeat(ctx)
	repeat := false
	steps.Walk(seq, func(st *steps.Step) {
		p.total++
		switch st.Kind {
		case steps.KindRepeat:
			repeat = true
		case steps.KindBuild, steps.KindUpload, steps.KindPIOTest:
			p.lines = true
		}
	})
	if repeat || p.lines {
		p.total = 0
	}
	if p.lines {
		p.interval = buildProgressInterval
	}
	p.wake = make(chan struct{}, 1)
	p.quit = make(chan struct{})
	p.stopped = make(chan struct{})
	go p.loop()
	return p
}

func (p *progress) Event(e runner.Event) {
	if p.wake == nil || e.Step == nil {
		return
	}
	st := e.Step
	switch e.Type {
	case runner.StepStarted:
		p.mu.Lock()
		p.running = append(p.running, runningStep{st: st, start: time.Now()})
		p.mu.Unlock()
		return
	case runner.StepFinished:
	default:
		return
	}
	line := fmt.Sprintf("%s %s %s %s %s", st.Path, st.Status, st.Kind, st.Name, fmtDur(st.Duration))
	if st.Message != "" {
		line += " " + st.Message
	}
	p.mu.Lock()
	for i := len(p.running) - 1; i >= 0; i-- {
		if p.running[i].st.Path == st.Path {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.done++
	p.events++
	p.beats = 0
	p.message = line
	p.dirty = true
	p.mu.Unlock()
	p.poke()
}

// line notes a line a build or upload tool printed.
func (p *progress) line(l string) {
	if p.wake == nil {
		return
	}
	p.mu.Lock()
	p.events++
	p.beats = 0
	p.message = l
	p.dirty = true
	p.mu.Unlock()
	p.poke()
}

func (p *progress) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *progress) loop() {
	defer close(p.stopped)
	beat := time.NewTimer(p.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-p.wake:
		case <-beat.C:
			p.beat()
		case <-p.quit:
			p.send()
			return
		}
		if p.send() {
			beat.Reset(p.heartbeat)
		}
		select {
		case <-time.After(p.interval):
		case <-p.quit:
			p.send()
			return
		}
	}
}

// beat makes a heartbeat the next notification when no news came for a
// whole heartbeat interval: it names the innermost running step and how
// long it has run, like "2 running expect  12.0s".
func (p *progress) beat() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.beats++
	p.message = "running"
	if n := len(p.running); n > 0 {
		r := p.running[n-1]
		p.message = fmt.Sprintf("%s running %s %s %s", r.st.Path, r.st.Kind, r.st.Name, fmtDur(time.Since(r.start)))
	}
	p.dirty = true
}

// send sends the news, if any, and reports whether it did.
func (p *progress) send() bool {
	p.mu.Lock()
	if !p.dirty {
		p.mu.Unlock()
		return false
	}

	// Progress must grow with every notification: with tool output in
	// the mix, it counts steps and lines alike; heartbeats add 1/2, 2/3,
	// 3/4... of the step that runs.
	n := float64(p.done)
	if p.lines {
		n = float64(p.events)
	}
	if p.beats > 0 {
		n += float64(p.beats) / float64(p.beats+1)
	}
	params := map[string]any{"progressToken": p.token, "progress": n, "message": p.message}
	if p.total > 0 && p.done <= p.total {
		params["total"] = p.total
	}
	p.dirty = false
	p.mu.Unlock()
	// Written when sendProgress returns (but for in-process clients), so
	// stop returns only once the last progress is out, ahead of the
	// result.
	sendProgress(p.ctx, p.out, p.srv, params)
	return true
}

// stop sends the last news and returns when it is written.
func (p *progress) stop() {
	if p.quit == nil {
		return
	}
	close(p.quit)
	<-p.stopped
}

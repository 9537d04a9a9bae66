package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The PlatformIO verbs. Every one that runs pio is a host program: it needs
// --allow-exec and a --root, and acts on a project folder under a root
// (checked, with the project's platformio.ini and environment, before pio
// runs). Global settings, upgrades, account and cloud commands and `pio
// remote` are not offered.

// pioClient is a PlatformIO client for one call, its output going to t
// when there is a task.
func (s *Server) pioClient(t *task, log io.Writer) *pio.Client {
	r := s.cfg.PIORunner
	if r == nil {
		r = pio.Exec{Runner: rootedRunner{process.Runner{Policy: s.cfg.Gates.Procs}, s.cfg.Policy.Roots}}
	}
	c := &pio.Client{Runner: r, Log: log}
	if t != nil {
		c.Progress = t.addLine
	}
	return c
}

// pioDir resolves a project folder under a root; "" is refused.
func (s *Server) pioDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("project_dir is required: a PlatformIO project folder under a --root")
	}
	if len(s.cfg.Policy.Roots) == 0 {
		return "", refused("project_dir %s: no --root folder was given", dir)
	}
	return s.cfg.Policy.ResolveDir("project_dir", dir, s.cfg.Policy.Roots[0])
}

// pioResult is what a PlatformIO verb that runs as a task did, as the tool
// and task_status return it.
type pioResult struct {
	TaskID string `json:"task_id"`
	Verb   string `json:"verb"`
	// State is running (background, just started), done, failed (pio
	// could not run) or cancelled.
	State    string `json:"state"`
	OK       bool   `json:"ok"`
	ExitCode int64  `json:"exit_code"`
	Summary  string `json:"summary"`
	// Tail is the end of the output.
	Tail       string  `json:"tail,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// Check holds check_project's defects per environment and tool.
	Check       []pio.CheckRun `json:"check,omitempty"`
	LogResource string         `json:"log_resource"`
}

// pioJob is one long verb: what it runs, given a client.
type pioJob func(ctx context.Context, c *pio.Client) (*pioResult, error)

// runPIOTask runs job as a task: to the end, or in the background when
// asked. Cancelling the call, or task_cancel, stops pio and what it
// started.
func (s *Server) runPIOTask(ctx context.Context, req mcp.CallToolRequest, verb string, background bool, job pioJob) (any, string, error) {
	t := s.tasks.add(verb)
	if !background {
		// A call with a progress token gets PlatformIO's output lines as
		// progress notifications, throttled as a build's are.
		p := s.newProgress(ctx, req, &steps.Sequence{Steps: []*steps.Step{{Kind: steps.KindPIOTest}}})
		defer p.stop()
		t.onLine = p.line
		r, err := s.runPIOJob(ctx, t, job)
		if err != nil {
			return nil, "", err
		}
		return r, formatPIO(r), nil
	}
	if err := s.background(ctx, t, func(bctx context.Context) { s.runPIOJob(bctx, t, job) }); err != nil {
		return nil, "", err
	}
	r := &pioResult{TaskID: t.id, Verb: verb, State: taskRunning, Summary: "running in the background: call task_status with task_id " + t.id, LogResource: taskLogURI(t.id)}
	return r, fmt.Sprintf("%s started as task %s: call task_status {\"task_id\": %q}, task_cancel to stop it; log: %s", verb, t.id, t.id, r.LogResource), nil
}

func (s *Server) runPIOJob(ctx context.Context, t *task, job pioJob) (*pioResult, error) {
	start := time.Now()
	var log io.Writer = io.Discard
	if err := s.own.MkdirAll(filepath.Dir(t.logPath), 0o755); err == nil {
		if f, err := s.own.Create(t.logPath); err == nil {
			defer f.Close()
			log = f
		}
	}
	r, err := job(ctx, s.pioClient(t, log))
	if err != nil {
		state := taskFailed
		if ctx.Err() != nil {
			state = taskCancelled
			err = fmt.Errorf("%s cancelled: %w", t.kind, err)
		}
		t.finishPIO(state, nil, err.Error())
		return nil, err
	}
	r.TaskID, r.Verb, r.State, r.LogResource = t.id, t.kind, taskDone, taskLogURI(t.id)
	r.DurationMS = ms(time.Since(start))
	t.finishPIO(taskDone, r, "")
	return r, nil
}

// outputResult is the result of a verb that answers in text.
func outputResult(out *pio.Output) *pioResult {
	r := &pioResult{OK: out.OK(), ExitCode: int64(out.ExitCode), Summary: out.Summary(), Tail: tail(out.Text, 20, 4096)}
	if r.OK && r.Summary == "" {
		r.Summary = "done"
	}
	return r
}

// tail is the last lines of text, at most max bytes.
func tail(text string, lines, max int) string {
	text = strings.TrimRight(text, "\n")
	ls := strings.Split(text, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	t := strings.Join(ls, "\n")
	if len(t) > max {
		t = "…" + t[len(t)-max:]
	}
	return t
}

func formatPIO(r *pioResult) string {
	var b strings.Builder
	status := "ok"
	if !r.OK {
		status = fmt.Sprintf("failed (exit code %d)", r.ExitCode)
	}
	fmt.Fprintf(&b, "%s %s: %s", r.Verb, status, r.Summary)
	for _, c := range r.Check {
		fmt.Fprintf(&b, "\n%s %s: %d high, %d medium, %d low", c.Env, c.Tool, c.High, c.Medium, c.Low)
		for _, d := range c.Defects {
			fmt.Fprintf(&b, "\n  %s:%d: [%s:%s] %s [%s]", d.File, d.Line, d.Severity, d.Category, d.Message, d.ID)
		}
	}
	fmt.Fprintf(&b, "\nlog: %s", r.LogResource)
	return b.String()
}

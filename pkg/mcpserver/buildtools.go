package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

type pioArgs struct {
	ProjectDir string `json:"project_dir"`
	Env        string `json:"env"`
	Verbose    bool   `json:"verbose"`
	Clean      bool   `json:"clean"`
}

type imageArgs struct {
	File   string          `json:"file"`
	Method string          `json:"method"`
	Verify bool            `json:"verify"`
	Reset  bool            `json:"reset"`
	Offset json.RawMessage `json:"offset"`
}

type buildArgs struct {
	Command       []string          `json:"command"`
	Dir           string            `json:"dir"`
	Env           map[string]string `json:"env"`
	ELF           string            `json:"elf"`
	PIO           *pioArgs          `json:"pio"`
	OpenOCD       *imageArgs        `json:"openocd"`
	Probe         string            `json:"probe"`
	Port          string            `json:"port"`
	TimeoutMS     int64             `json:"timeout_ms"`
	LockTimeoutMS *int64            `json:"lock_timeout_ms"`
	Background    bool              `json:"background"`
}

// stepSpec turns the tool's arguments into a step mapping of kind.
func (s *Server) stepSpec(kind steps.Kind, a *buildArgs) (map[string]any, error) {
	if kind == steps.KindBuild && (a.OpenOCD != nil || a.Probe != "" || a.Port != "") {
		return nil, errors.New("build takes no openocd, probe or port: use upload")
	}
	if kind == steps.KindUpload && a.ELF != "" {
		return nil, errors.New("upload takes no elf: use build for sizes")
	}
	spec := map[string]any{}
	if len(a.Command) > 0 {
		cmd := make([]any, len(a.Command))
		for i, c := range a.Command {
			cmd[i] = c
		}
		spec["command"] = cmd
	}
	if a.Dir != "" {
		spec["dir"] = a.Dir
	}
	if len(a.Env) > 0 {
		env := map[string]any{}
		for k, v := range a.Env {
			env[k] = v
		}
		spec["env"] = env
	}
	if a.ELF != "" {
		spec["elf"] = a.ELF
	}
	if a.PIO != nil {
		spec["pio"] = map[string]any{"project_dir": a.PIO.ProjectDir, "env": a.PIO.Env, "verbose": a.PIO.Verbose, "clean": a.PIO.Clean}
	}
	if im := a.OpenOCD; im != nil {
		m := map[string]any{"file": im.File, "verify": im.Verify, "reset": im.Reset}
		if im.Method != "" {
			m["method"] = im.Method
		}
		if len(im.Offset) > 0 {
			off, err := parseNumber(im.Offset, "openocd.offset")
			if err != nil {
				return nil, err
			}
			m["offset"] = off
		}
		spec["openocd"] = m
	}
	if a.Port != "" {
		// A connection's port is released for the upload.
		port, err := s.lentPort(a.Port)
		if err != nil {
			return nil, err
		}
		spec["port"] = port
	}
	step := map[string]any{string(kind): spec}
	if a.Probe != "" {
		step["probe"] = a.Probe
	}
	if a.TimeoutMS > 0 {
		step["timeout"] = fmt.Sprintf("%dms", a.TimeoutMS)
	}
	return step, nil
}

// toolSequence is the one-step sequence a build or upload tool runs.
func (s *Server) toolSequence(kind steps.Kind, a *buildArgs) (*steps.Sequence, error) {
	step, err := s.stepSpec(kind, a)
	if err != nil {
		return nil, err
	}
	return stepSequence(kind, step)
}

// stepSequence is the one-step sequence of step, a mapping of kind.
func stepSequence(kind steps.Kind, step map[string]any) (*steps.Sequence, error) {
	top := steps.Object{{Key: "name", Value: string(kind)}, {Key: "steps", Value: []any{step}}}
	seq, err := steps.ParseValue(string(kind), top, steps.LoadOptions{})
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			var msgs []string
			for _, e := range el {
				msgs = append(msgs, e.Msg)
			}
			return nil, fmt.Errorf("invalid %s arguments: %s", kind, strings.Join(msgs, "; "))
		}
		return nil, err
	}
	return seq, nil
}

func (s *Server) buildTool(ctx context.Context, req mcp.CallToolRequest, a *buildArgs) (any, string, error) {
	return s.runTool(ctx, req, steps.KindBuild, a)
}

func (s *Server) uploadTool(ctx context.Context, req mcp.CallToolRequest, a *buildArgs) (any, string, error) {
	return s.runTool(ctx, req, steps.KindUpload, a)
}

// runTool runs a build or upload as a task: to the end, or in the
// background when asked.
func (s *Server) runTool(ctx context.Context, req mcp.CallToolRequest, kind steps.Kind, a *buildArgs) (any, string, error) {
	seq, err := s.toolSequence(kind, a)
	if err != nil {
		return nil, "", err
	}
	return s.runStepTool(ctx, req, kind, seq, a.Background, a.LockTimeoutMS)
}

// runStepTool runs seq, one step of kind, as a task.
func (s *Server) runStepTool(ctx context.Context, req mcp.CallToolRequest, kind steps.Kind, seq *steps.Sequence, background bool, lockTimeoutMS *int64) (any, string, error) {
	o := execOptions{keepSteps: true, bound: true, sources: plan.Sources{Bench: s.cfg.Bench}, lockWait: lockWait(lockTimeoutMS), label: func(steps.Pos) string { return string(kind) }}
	// Refuse before a task exists: a background call learns at once.
	if _, _, err := s.bindPlan(seq, o); err != nil {
		return nil, "", err
	}
	if !background {
		t := s.tasks.add(string(kind))
		out, err := s.runTask(ctx, req, t, seq, o)
		if err != nil {
			return nil, "", err
		}
		return out, formatBuild(out), nil
	}

	// The task keeps the call's session (for "held by") but no progress
	// token, which ends with the call.
	breq := req
	if req.Params.Meta != nil {
		m := *req.Params.Meta
		m.ProgressToken = nil
		breq.Params.Meta = &m
	}
	t := s.tasks.add(string(kind))
	if err := s.background(ctx, t, func(bctx context.Context) { s.runTask(bctx, breq, t, seq, o) }); err != nil {
		return nil, "", err
	}
	out := buildResult{TaskID: t.id, Kind: t.kind, State: taskRunning, Summary: "running in the background: call task_status with task_id " + t.id, LogResource: taskLogURI(t.id)}
	return out, fmt.Sprintf("%s started as task %s: call task_status {\"task_id\": %q}; log: %s", kind, t.id, t.id, out.LogResource), nil
}

// background runs fn for task t after the call returns: it outlives the
// call but not the server, and task_cancel (t's cancel) stops it. A server
// that is shutting down runs nothing, and t ends failed.
func (s *Server) background(ctx context.Context, t *task, fn func(ctx context.Context)) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		err := errors.New("the server is shutting down")
		t.finish(taskFailed, nil, err.Error())
		return err
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.life, cancel)
	t.setCancel(cancel, sessionOwner(ctx))
	go func() {
		defer s.inflight.Done()
		defer stop()
		defer cancel()
		fn(bctx)
	}()
	return nil
}

// runTask runs seq for t and records how it ended. The error is for a run
// that did not happen or could not run its tool (refused, busy, a tool that
// is not installed, cancelled).
func (s *Server) runTask(ctx context.Context, req mcp.CallToolRequest, t *task, seq *steps.Sequence, o execOptions) (*buildResult, error) {
	o.buildLog = t.logPath
	o.buildLine = t.addLine
	out, res, err := s.executeRun(ctx, req, seq, o)
	if err != nil {
		state := taskFailed
		if ctx.Err() != nil {
			state = taskCancelled
		}
		t.finish(state, nil, err.Error())
		return nil, err
	}
	if len(res.Steps) == 0 {
		err := errors.New(first(res.Error, "nothing ran"))
		t.finish(taskFailed, nil, err.Error())
		return nil, err
	}
	st := res.Steps[0]
	r := resultFrom(t, st)
	r.RunID, r.ReportResource = out.RunID, out.ReportResource
	// An image written through OpenOCD makes no build log: what OpenOCD
	// said is the log.
	if _, err := os.Stat(t.logPath); err != nil {
		s.own.MkdirAll(filepath.Dir(t.logPath), 0o755)
		s.own.WriteFile(t.logPath, []byte(strings.TrimSpace(r.Output+"\n"+st.Message)+"\n"), 0o644)
	}
	switch st.Status {
	case runner.Passed, runner.Failed:
		r.State = taskDone
		t.finish(taskDone, r, "")
		return r, nil
	case runner.Interrupted:
		t.finish(taskCancelled, r, st.Message)
		return nil, fmt.Errorf("%s cancelled: %s", t.kind, first(st.Message, res.Error))
	}
	t.finish(taskFailed, r, st.Message)
	return nil, fmt.Errorf("%s could not run: %s", t.kind, first(st.Message, res.Error))
}

// lentPort is the port a tool's port argument names, for a step that
// borrows it (an upload, PlatformIO's tests): an open connection's port,
// found by its id, label or path (the run finds the connection by that
// path and lends it), or a port path.
func (s *Server) lentPort(arg string) (string, error) {
	s.mu.Lock()
	c := s.findConnLocked(arg)
	s.mu.Unlock()
	switch {
	case c != nil:
		return c.port, nil
	case steps.IsPortPath(arg):
		return arg, nil
	}
	return "", fmt.Errorf("port %q: no open connection has this id or label, and it is not a port path", arg)
}

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

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// buildDir is the folder of a run's build and upload logs.
const buildDir = "build"

// builder runs the tools of build and upload steps, writing each tool's
// whole output to logFile(step) and passing every line to line as well as
// to the runner.
func (s *Server) builder(logFile func(*steps.Step) string, line func(string)) func(runner.Builder) runner.Builder {
	return func(next runner.Builder) runner.Builder {
		if next == nil {
			return nil
		}
		return func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			req.Log = logFile(req.Step)
			if progress := req.Progress; progress != nil {
				req.Progress = func(l string) { progress(l); line(l) }
			} else {
				req.Progress = line
			}
			return next(ctx, req)
		}
	}
}

// releaser is a console that can hand its port over to an uploader:
// *serialx.Console.
type releaser interface {
	Release(ctx context.Context) error
	Reacquire(ctx context.Context, opts serialx.ReacquireOptions) error
}

// handing is a console the runner may release for an upload's port and
// take back after.
type handing struct {
	runner.Console
	r releaser
}

// Unwrap is the console behind h, for the runner's modem line steps.
func (h *handing) Unwrap() runner.Console { return h.Console }

func (h *handing) Release(ctx context.Context) error { return h.r.Release(ctx) }

func (h *handing) Reacquire(ctx context.Context) error {
	return h.r.Reacquire(ctx, serialx.ReacquireOptions{})
}

// openedHanding is a handing console opened for one run: the run sees all
// it received (runner.OpenedConsole).
type openedHanding struct{ *handing }

func (openedHanding) OpenedAt() int64 { return 0 }

// openedForRun is handOver(c, c) for a console a sequence opened for
// itself, which the run sees from its first byte.
func openedForRun(c Console) runner.Console {
	h := handOver(c, c)
	if hh, ok := h.(*handing); ok {
		return openedHanding{hh}
	}
	return h
}

// handOver returns c as a console the runner can release when under, the
// console behind it, supports that; else c.
func handOver(c runner.Console, under any) runner.Console {
	if r, ok := under.(releaser); ok {
		return &handing{Console: c, r: r}
	}
	return c
}

// checkBuild applies the policy to a build or upload step and resolves its
// folders and files to real paths under a root. Builds run programs, so
// over MCP they run only inside the --root folders, never through a shell.
func (s *Server) checkBuild(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	b := st.Build
	if b.Shell {
		return refused("%s: shell: true is not run over MCP; give command as an argument vector", st.Kind)
	}
	base := s.baseDir(seq)
	switch {
	case b.Image != nil:
		real, err := p.resolveIn("upload file "+b.Image.File, b.Image.File, base)
		if err != nil {
			return err
		}
		setPath(&b.Image.File, real)
	case b.PIO != nil:
		dir, err := p.ResolveDir("pio.project_dir", b.PIO.ProjectDir, base)
		if err != nil {
			return err
		}
		// A folder without platformio.ini, or an environment it lacks, is
		// refused before PlatformIO runs.
		if err := pio.CheckProject(dir, b.PIO.Env); err != nil {
			return fmt.Errorf("%s: %w", st.Kind, err)
		}
		setPath(&b.PIO.ProjectDir, dir)
	default:
		dir, err := p.ResolveDir("dir", b.Dir, base)
		if err != nil {
			return err
		}
		setPath(&b.Dir, dir)
		if b.ELF != "" {
			elf := b.ELF
			if !filepath.IsAbs(elf) {
				elf = filepath.Join(dir, elf)
			}
			if err := p.CheckOutput("elf", elf); err != nil {
				return err
			}
		}
	}
	if b.Port != "" && seq.Device(b.Port) == nil {
		if err := s.checkPort(b.Port); err != nil {
			return err
		}
	}
	return nil
}

// uploadPortDevices makes the open connection behind an upload's port path
// a device of seq, so that the runner releases its console for the upload.
func (s *Server) uploadPortDevices(seq *steps.Sequence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	steps.Walk(seq, func(st *steps.Step) {
		if (st.Kind != steps.KindUpload && st.Kind != steps.KindPIOTest) || st.Build == nil || st.Build.Port == "" || seq.Device(st.Build.Port) != nil {
			return
		}
		c := s.findConnLocked(st.Build.Port)
		if c == nil {
			return
		}
		for _, d := range seq.Devices {
			if d.Port == c.port && s.findConnLocked(d.Name) == c {
				st.Build.Port = d.Name
				return
			}
		}
		name := c.id
		for seq.Device(name) != nil {
			name += "_upload"
		}
		seq.Devices = append(seq.Devices, &steps.Device{Name: name, Port: c.port, LineEnding: c.lineEnding, Pos: st.Pos})
		st.Build.Port = name
	})
}

// uploadPortKeys are the locks of upload ports that are paths rather than
// devices: nothing else may use the port while an uploader has it.
func (s *Server) uploadPortKeys(seq *steps.Sequence) []string {
	var keys []string
	steps.Walk(seq, func(st *steps.Step) {
		if (st.Kind == steps.KindUpload || st.Kind == steps.KindPIOTest) && st.Build != nil && st.Build.Port != "" && seq.Device(st.Build.Port) == nil {
			keys = append(keys, portKey(realPort(st.Build.Port)))
		}
	})
	return keys
}

// --- the build and upload tools ---

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

// testCaseOut is one test case of a pio_test step.
type testCaseOut struct {
	Suite string `json:"suite"`
	Env   string `json:"env"`
	Name  string `json:"name"`
	// Status is PASSED, FAILED, SKIPPED, WARNED or ERRORED.
	Status     string  `json:"status"`
	Message    string  `json:"message,omitempty"`
	File       string  `json:"file,omitempty"`
	Line       int     `json:"line,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

type diagnosticOut struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// buildResult is what a build or upload did, as the tools and task_status
// return it: build.Result's fields, sizes flattened.
type buildResult struct {
	TaskID string `json:"task_id"`
	Kind   string `json:"kind"`
	// State is running (background, just started), done, failed or
	// cancelled.
	State      string         `json:"state"`
	OK         bool           `json:"ok"`
	Class      string         `json:"class,omitempty"`
	Summary    string         `json:"summary"`
	Diagnostic *diagnosticOut `json:"diagnostic,omitempty"`
	Tail       string         `json:"tail,omitempty"`
	DurationMS float64        `json:"duration_ms"`
	ExitCode   *int64         `json:"exit_code,omitempty"`
	Command    []string       `json:"command,omitempty"`

	Text         *int64   `json:"text,omitempty"`
	Data         *int64   `json:"data,omitempty"`
	BSS          *int64   `json:"bss,omitempty"`
	FlashBytes   *int64   `json:"flash_bytes,omitempty"`
	RAMBytes     *int64   `json:"ram_bytes,omitempty"`
	FlashTotal   *int64   `json:"flash_total,omitempty"`
	FlashPercent *float64 `json:"flash_percent,omitempty"`
	RAMTotal     *int64   `json:"ram_total,omitempty"`
	RAMPercent   *float64 `json:"ram_percent,omitempty"`
	ELF          string   `json:"elf,omitempty"`

	// File, Method and Output describe an image written through OpenOCD.
	File   string `json:"file,omitempty"`
	Method string `json:"method,omitempty"`
	Output string `json:"output,omitempty"`

	// Tests holds the test cases a pio_test step ran, each with its
	// status; TestCases, Failures, Errors and Skipped count them.
	Tests     []testCaseOut `json:"tests,omitempty"`
	TestCases *int64        `json:"test_cases,omitempty"`
	Failures  *int64        `json:"failures,omitempty"`
	Errors    *int64        `json:"errors,omitempty"`
	Skipped   *int64        `json:"skipped,omitempty"`

	LogResource    string `json:"log_resource"`
	RunID          string `json:"run_id,omitempty"`
	ReportResource string `json:"report_resource,omitempty"`
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
		// A connection's port is released for the upload; the run finds
		// the connection by its path.
		s.mu.Lock()
		c := s.findConnLocked(a.Port)
		s.mu.Unlock()
		switch {
		case c != nil:
			spec["port"] = c.port
		case steps.IsPortPath(a.Port):
			spec["port"] = a.Port
		default:
			return nil, fmt.Errorf("port %q: no open connection has this id or label, and it is not a port path", a.Port)
		}
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
		os.MkdirAll(filepath.Dir(t.logPath), 0o755)
		os.WriteFile(t.logPath, []byte(strings.TrimSpace(r.Output+"\n"+st.Message)+"\n"), 0o644)
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

// resultFrom reads a build or upload step's result.
func resultFrom(t *task, st runner.StepResult) *buildResult {
	d := st.Data
	r := &buildResult{TaskID: t.id, Kind: t.kind, OK: st.Status == runner.Passed, Summary: st.Message,
		DurationMS: ms(st.Duration), LogResource: taskLogURI(t.id)}
	str := func(k string) string { v, _ := d[k].(string); return v }
	r.Class = str("class")
	if r.Summary == "" {
		r.Summary = str("summary")
	}
	if !r.OK && r.Class == "" && strings.Contains(r.Summary, "timed out") {
		r.Class = "Timeout"
	}
	r.Tail, r.ELF = str("tail"), str("elf")
	r.File, r.Method, r.Output = str("file"), str("method"), str("output")
	if v, ok := number(d["duration_ms"]); ok {
		r.DurationMS = v
	}
	if cases, ok := d["cases"].([]any); ok {
		for _, x := range cases {
			m, _ := x.(map[string]any)
			str := func(k string) string { v, _ := m[k].(string); return v }
			line, _ := number(m["line"])
			ms, _ := number(m["duration_ms"])
			r.Tests = append(r.Tests, testCaseOut{Suite: str("suite"), Env: str("env"), Name: str("name"), Status: str("status"),
				Message: str("message"), File: str("file"), Line: int(line), DurationMS: ms})
		}
	}
	ints := map[string]**int64{"exit_code": &r.ExitCode, "test_cases": &r.TestCases, "failures": &r.Failures, "errors": &r.Errors, "skipped": &r.Skipped, "text": &r.Text, "data": &r.Data, "bss": &r.BSS,
		"flash_bytes": &r.FlashBytes, "ram_bytes": &r.RAMBytes, "flash_total": &r.FlashTotal, "ram_total": &r.RAMTotal}
	for k, p := range ints {
		if v, ok := number(d[k]); ok {
			n := int64(v)
			*p = &n
		}
	}
	for k, p := range map[string]**float64{"flash_percent": &r.FlashPercent, "ram_percent": &r.RAMPercent} {
		if v, ok := number(d[k]); ok {
			*p = &v
		}
	}
	if cmd, ok := d["command"].([]any); ok {
		for _, c := range cmd {
			r.Command = append(r.Command, fmt.Sprint(c))
		}
	}
	if dg, ok := d["diagnostic"].(map[string]any); ok {
		m, _ := dg["message"].(string)
		f, _ := dg["file"].(string)
		line, _ := number(dg["line"])
		col, _ := number(dg["column"])
		if m != "" || f != "" {
			r.Diagnostic = &diagnosticOut{File: f, Line: int(line), Column: int(col), Message: m}
		}
	}
	return r
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// formatBuild is the one-line outcome of a build or upload:
// "build ok: flash 564 bytes, ram 2096 bytes in 0.104s", or
// "build failed: MissingHeader broken/missing_header.c:6:10: ...".
func formatBuild(r *buildResult) string {
	var b strings.Builder
	dur := fmtDur(durationMS(r.DurationMS))
	if r.OK {
		fmt.Fprintf(&b, "%s ok: %s in %s", r.Kind, first(r.Summary, "done"), dur)
	} else {
		fmt.Fprintf(&b, "%s failed:", r.Kind)
		if r.Class != "" {
			b.WriteString(" " + r.Class)
		}
		if d := r.Diagnostic; d != nil && d.File != "" {
			fmt.Fprintf(&b, " %s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
		} else {
			b.WriteString(" " + r.Summary)
		}
		fmt.Fprintf(&b, " (after %s)", dur)
	}
	for _, c := range r.Tests {
		fmt.Fprintf(&b, "\n  %s:%s/%s %s", c.Env, c.Suite, c.Name, c.Status)
		if c.Message != "" {
			fmt.Fprintf(&b, ": %s (%s:%d)", c.Message, c.File, c.Line)
		}
	}
	b.WriteString("\nlog: " + r.LogResource)
	return b.String()
}

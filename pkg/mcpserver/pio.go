package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The PlatformIO verbs. Every one that runs pio is a host program: it needs
// --allow-exec and a --root, and acts on a project folder under a root
// (checked, with the project's platformio.ini and environment, before pio
// runs). Global settings, upgrades, account and cloud commands and `pio
// remote` are not offered.

// pioCaps is what a verb that runs pio needs: running a host program.
const pioCaps = steps.CapHostExec

// pioProjectCaps is what a verb on a project needs: a program in a folder
// under a root.
const pioProjectCaps = steps.CapHostExec | steps.CapReadFiles

// pioClient is a PlatformIO client for one call, its output going to t
// when there is a task.
func (s *Server) pioClient(t *task, log io.Writer) *pio.Client {
	r := s.cfg.PIORunner
	if r == nil {
		r = pio.Exec{Runner: build.ExecRunner{Environ: s.cfg.Policy.Environ()}}
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
	if err := os.MkdirAll(filepath.Dir(t.logPath), 0o755); err == nil {
		if f, err := os.Create(t.logPath); err == nil {
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

// --- boards, devices, system ---

type listBoardsArgs struct {
	Filter string `json:"filter"`
}

type boardsResult struct {
	Boards []pio.Board `json:"boards"`
}

func (s *Server) pioListBoards(ctx context.Context, _ mcp.CallToolRequest, a *listBoardsArgs) (any, string, error) {
	boards, err := s.pioClient(nil, nil).ListBoards(ctx, a.Filter)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for i, b := range boards {
		if i == 50 {
			lines = append(lines, fmt.Sprintf("... %d more in the structured result", len(boards)-50))
			break
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %s  %d kB flash  %d kB RAM  (%s)", b.ID, b.Name, b.MCU, b.ROM/1024, b.RAM/1024, b.Platform))
	}
	if len(lines) == 0 {
		lines = append(lines, "no board matches "+a.Filter)
	}
	return boardsResult{Boards: boards}, strings.Join(lines, "\n"), nil
}

type boardInfoArgs struct {
	BoardID string `json:"board_id"`
	Board   string `json:"board"`
}

func (s *Server) pioBoardInfo(ctx context.Context, _ mcp.CallToolRequest, a *boardInfoArgs) (any, string, error) {
	b, err := s.pioClient(nil, nil).BoardInfo(ctx, first(a.BoardID, a.Board))
	if err != nil {
		return nil, "", err
	}
	return b, fmt.Sprintf("%s: %s, %s at %d MHz, %d bytes flash, %d bytes RAM, platform %s, frameworks %s, %s",
		b.ID, b.Name, b.MCU, b.FCPU/1000000, b.ROM, b.RAM, b.Platform, strings.Join(b.Frameworks, ", "), b.URL), nil
}

type noArgs struct{}

type devicesResult struct {
	Devices []pio.Device `json:"devices"`
}

func (s *Server) pioListDevices(ctx context.Context, _ mcp.CallToolRequest, _ *noArgs) (any, string, error) {
	devs, err := s.pioClient(nil, nil).ListDevices(ctx)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, d := range devs {
		l := d.Port + "  " + d.Description
		if d.VID != "" {
			l += "  " + d.VID + ":" + d.PID
		}
		if d.Board != "" {
			l += "  likely " + d.Board
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		lines = append(lines, "no serial devices found")
	}
	return devicesResult{Devices: devs}, strings.Join(lines, "\n"), nil
}

type systemInfoResult struct {
	Items []pio.InfoItem `json:"items"`
}

func (s *Server) pioSystemInfo(ctx context.Context, _ mcp.CallToolRequest, _ *noArgs) (any, string, error) {
	items, err := s.pioClient(nil, nil).SystemInfo(ctx)
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, it := range items {
		lines = append(lines, it.Title+": "+it.Value)
	}
	return systemInfoResult{Items: items}, strings.Join(lines, "\n"), nil
}

// --- projects ---

type initProjectArgs struct {
	Board      string `json:"board"`
	Framework  string `json:"framework"`
	ProjectDir string `json:"project_dir"`
	Background bool   `json:"background"`
}

func (s *Server) pioInitProject(ctx context.Context, req mcp.CallToolRequest, a *initProjectArgs) (any, string, error) {
	if a.ProjectDir == "" {
		return nil, "", errors.New("project_dir is required: the new project's folder under a --root")
	}
	p := &s.cfg.Policy
	if len(p.Roots) == 0 {
		return nil, "", refused("project_dir %s: no --root folder was given", a.ProjectDir)
	}
	dir := a.ProjectDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Roots[0], dir)
	}
	dir = filepath.Clean(dir)
	// The folder may not exist yet: its parent must, under a root.
	parent, err := p.ResolveDir("project_dir", filepath.Dir(dir), p.Roots[0])
	if err != nil {
		return nil, "", err
	}
	dir = filepath.Join(parent, filepath.Base(dir))
	if err := p.CheckOutput("project_dir", dir); err != nil {
		return nil, "", err
	}
	// An unknown board is refused before a task exists: a background
	// call learns at once.
	if _, err := s.pioClient(nil, nil).BoardInfo(ctx, a.Board); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "init_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		out, err := c.InitProject(ctx, pio.InitSpec{ProjectDir: dir, Board: a.Board, Framework: a.Framework})
		if out == nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

type projectArgs struct {
	ProjectDir  string `json:"project_dir"`
	Env         string `json:"env"`
	Environment string `json:"environment"`
	Port        string `json:"port"`
	Background  bool   `json:"background"`
}

func (a *projectArgs) env() string { return first(a.Env, a.Environment) }

// configOption is one option of platformio.ini: its value as PlatformIO
// read it, as text, and a list option's values.
type configOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Values holds the items of a list option (lib_deps, build_flags).
	Values []string `json:"values,omitempty"`
}

type configSection struct {
	Name    string         `json:"name"`
	Options []configOption `json:"options"`
}

type configResult struct {
	ProjectDir string          `json:"project_dir"`
	Envs       []string        `json:"envs"`
	Sections   []configSection `json:"sections"`
}

func (s *Server) pioProjectConfig(ctx context.Context, _ mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	cfg, err := s.pioClient(nil, nil).GetProjectConfig(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	out := configResult{ProjectDir: dir, Envs: append([]string{}, cfg.Envs()...), Sections: []configSection{}}
	var lines []string
	for _, sec := range cfg.Sections {
		cs := configSection{Name: sec.Name, Options: []configOption{}}
		lines = append(lines, "["+sec.Name+"]")
		for _, o := range sec.Options {
			co := configOption{Name: o.Name}
			switch v := o.Value.(type) {
			case string:
				co.Value = v
			case []any:
				for _, x := range v {
					co.Values = append(co.Values, fmt.Sprint(x))
				}
				co.Value = strings.Join(co.Values, ", ")
			default:
				b, _ := json.Marshal(v)
				co.Value = string(b)
			}
			cs.Options = append(cs.Options, co)
			lines = append(lines, o.Name+" = "+co.Value)
		}
		out.Sections = append(out.Sections, cs)
	}
	return out, strings.Join(lines, "\n"), nil
}

func (s *Server) pioClean(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "clean_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		out, err := c.RunTarget(ctx, dir, a.env(), "clean", "")
		if err != nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

func (s *Server) pioUploadFS(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	port := a.Port
	var keys []string
	if port != "" {
		s.mu.Lock()
		c := s.findConnLocked(port)
		s.mu.Unlock()
		if c != nil {
			return nil, "", fmt.Errorf("port %s is open as connection %s: close it (stop_monitor or serial_close) before upload_filesystem, or use upload with port, which lends the port for the upload", port, c.id)
		}
		if !steps.IsPortPath(port) {
			return nil, "", fmt.Errorf("port %q: not a port path", port)
		}
		if err := s.checkPort(port); err != nil {
			return nil, "", err
		}
		if err := s.leaseBusy(ctx, portKey(realPort(port))); err != nil {
			return nil, "", err
		}
		keys = append(keys, portKey(realPort(port)))
	}
	return s.runPIOTask(ctx, req, "upload_filesystem", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		if len(keys) > 0 {
			release, err := s.locks.acquire(ctx, keys, who(ctx, req), 0)
			if err != nil {
				return nil, err
			}
			defer release()
		}
		out, err := c.RunTarget(ctx, dir, a.env(), "uploadfs", port)
		if err != nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

func (s *Server) pioCheck(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "check_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		runs, out, err := c.CheckProjectDefects(ctx, dir, a.env())
		if err != nil {
			return nil, err
		}
		r := outputResult(out)
		r.Check = runs
		n := 0
		for _, run := range runs {
			n += len(run.Defects)
			r.OK = r.OK && run.Succeeded
		}
		r.Summary = fmt.Sprintf("%d defects", n)
		return r, nil
	})
}

type runTestsArgs struct {
	projectArgs
	Filter           []string `json:"filter"`
	Ignore           []string `json:"ignore"`
	TestPort         string   `json:"test_port"`
	WithoutUploading bool     `json:"without_uploading"`
	LockTimeoutMS    *int64   `json:"lock_timeout_ms"`
}

// pioRunTests runs the tests as a one-step sequence with a pio_test step:
// a run of hilrun's, its report (report_resource) holding every test case,
// as `hilrun run` does with the step.
func (s *Server) pioRunTests(ctx context.Context, req mcp.CallToolRequest, a *runTestsArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	spec := map[string]any{"project_dir": dir}
	if e := a.env(); e != "" {
		spec["env"] = e
	}
	if len(a.Filter) > 0 {
		spec["filter"] = a.Filter
	}
	if len(a.Ignore) > 0 {
		spec["ignore"] = a.Ignore
	}
	if a.Port != "" {
		// A connection's port is lent for the tests, as for an upload.
		s.mu.Lock()
		c := s.findConnLocked(a.Port)
		s.mu.Unlock()
		switch {
		case c != nil:
			spec["port"] = c.port
		case steps.IsPortPath(a.Port):
			spec["port"] = a.Port
		default:
			return nil, "", fmt.Errorf("port %q: no open connection has this id or label, and it is not a port path", a.Port)
		}
	}
	if a.TestPort != "" {
		if !steps.IsPortPath(a.TestPort) {
			return nil, "", fmt.Errorf("test_port %q: not a port path", a.TestPort)
		}
		if err := s.checkPort(a.TestPort); err != nil {
			return nil, "", err
		}
		spec["test_port"] = a.TestPort
	}
	if a.WithoutUploading {
		spec["without_uploading"] = true
	}
	seq, err := stepSequence(steps.KindPIOTest, map[string]any{string(steps.KindPIOTest): spec})
	if err != nil {
		return nil, "", err
	}
	return s.runStepTool(ctx, req, steps.KindPIOTest, seq, a.Background, a.LockTimeoutMS)
}

// --- libraries ---

type searchArgs struct {
	Query string `json:"query"`
	Page  int    `json:"page"`
}

func (s *Server) pioSearch(ctx context.Context, _ mcp.CallToolRequest, a *searchArgs) (any, string, error) {
	res, err := s.pioClient(nil, nil).SearchLibraries(ctx, a.Query, a.Page)
	if err != nil {
		return nil, "", err
	}
	lines := []string{fmt.Sprintf("%d libraries (page %d of %d)", res.Total, res.Page, res.Pages)}
	for _, l := range res.Libraries {
		lines = append(lines, fmt.Sprintf("%s/%s %s: %s", l.Owner, l.Name, l.Version, l.Description))
	}
	return res, strings.Join(lines, "\n"), nil
}

type libraryArgs struct {
	projectArgs
	Library string `json:"library"`
}

func (s *Server) pioLibrary(verb pio.LibraryVerb, tool string) func(context.Context, mcp.CallToolRequest, *libraryArgs) (any, string, error) {
	return func(ctx context.Context, req mcp.CallToolRequest, a *libraryArgs) (any, string, error) {
		dir, err := s.pioDir(a.ProjectDir)
		if err != nil {
			return nil, "", err
		}
		if strings.TrimSpace(a.Library) == "" || strings.HasPrefix(a.Library, "-") {
			return nil, "", fmt.Errorf("library %q: give a library name or specification (owner/name@^1.2.3)", a.Library)
		}
		if err := pio.CheckProject(dir, a.env()); err != nil {
			return nil, "", err
		}
		return s.runPIOTask(ctx, req, tool, a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
			out, err := c.Library(ctx, verb, dir, a.env(), a.Library)
			if err != nil {
				return nil, err
			}
			return outputResult(out), nil
		})
	}
}

type librariesResult struct {
	Libraries []pio.InstalledLibrary `json:"libraries"`
}

func (s *Server) pioListLibraries(ctx context.Context, _ mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	libs, err := s.pioClient(nil, nil).ListLibraries(ctx, dir, a.env())
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, l := range libs {
		lines = append(lines, fmt.Sprintf("%s%s: %s @ %s (required: %s)", strings.Repeat("  ", l.Depth), l.Env, l.Name, l.Version, l.Required))
	}
	if len(lines) == 0 {
		lines = append(lines, "no libraries installed")
	}
	return librariesResult{Libraries: libs}, strings.Join(lines, "\n"), nil
}

// --- monitors and locks ---

type stopMonitorArgs struct {
	Port          string `json:"port"`
	Connection    string `json:"connection"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

func (s *Server) stopMonitor(ctx context.Context, req mcp.CallToolRequest, a *stopMonitorArgs) (any, string, error) {
	return s.serialClose(ctx, req, &closeArgs{Connection: first(a.Connection, a.Port), LockTimeoutMS: a.LockTimeoutMS})
}

type lockArgs struct {
	Port   string `json:"port"`
	Reason string `json:"reason"`
}

type acquireLockArgs struct {
	Port   string `json:"port"`
	Reason string `json:"reason"`
	TTLMS  *int64 `json:"ttl_ms"`
}

type lockResult struct {
	Port   string `json:"port"`
	Held   bool   `json:"held"`
	Owner  string `json:"owner"`
	Reason string `json:"reason,omitempty"`
	// Expires is when the lock lapses unless acquire_lock renews it.
	Expires string `json:"expires,omitempty"`
}

// defaultLockTTL is how long acquire_lock holds a port without ttl_ms, and
// maxLockTTL the most ttl_ms may ask: a client that vanishes does not keep
// a port for ever.
const (
	defaultLockTTL = 10 * time.Minute
	maxLockTTL     = 24 * time.Hour
)

// lockPort is the port path behind a connection id, label or path.
func (s *Server) lockPort(ref string) (string, error) {
	if ref == "" {
		return "", errors.New("port is required: a port path, or a connection id or label")
	}
	s.mu.Lock()
	c := s.findConnLocked(ref)
	s.mu.Unlock()
	if c != nil {
		return c.port, nil
	}
	if !steps.IsPortPath(ref) {
		return "", fmt.Errorf("port %q: no open connection has this id or label, and it is not a port path", ref)
	}
	if err := s.checkPort(ref); err != nil {
		return "", err
	}
	return ref, nil
}

func (s *Server) acquireLock(ctx context.Context, _ mcp.CallToolRequest, a *acquireLockArgs) (any, string, error) {
	port, err := s.lockPort(a.Port)
	if err != nil {
		return nil, "", err
	}
	ttl := defaultLockTTL
	if a.TTLMS != nil {
		if *a.TTLMS <= 0 || *a.TTLMS > maxLockTTL.Milliseconds() {
			return nil, "", fmt.Errorf("ttl_ms must be from 1 to %d (24 hours), found %d", maxLockTTL.Milliseconds(), *a.TTLMS)
		}
		ttl = time.Duration(*a.TTLMS) * time.Millisecond
	}
	owner := sessionOwner(ctx)
	if owner == "" {
		return nil, "", errors.New("this call has no MCP session to hold the lock")
	}
	l, err := s.leases.Lock(ctx, serialx.LeaseKey(port), owner, serialx.LeaseOptions{TTL: ttl, Note: first(a.Reason, "acquire_lock")})
	if err != nil {
		return nil, "", err
	}
	return lockResult{Port: port, Held: true, Owner: l.Owner, Reason: a.Reason, Expires: rfc3339(l.Expires)},
		fmt.Sprintf("%s is held by this session until %s (call acquire_lock again to renew), release_lock, or the end of the session", port, rfc3339(l.Expires)), nil
}

func (s *Server) releaseLock(ctx context.Context, _ mcp.CallToolRequest, a *lockArgs) (any, string, error) {
	port, err := s.lockPort(a.Port)
	if err != nil {
		return nil, "", err
	}
	owner := sessionOwner(ctx)
	if !s.leases.Unlock(serialx.LeaseKey(port), owner) {
		return lockResult{Port: port, Owner: owner}, port + " was not held by this session", nil
	}
	return lockResult{Port: port, Owner: owner}, port + " released", nil
}

// --- task_cancel ---

type cancelResult struct {
	TaskID string `json:"task_id"`
	// State is the task's state after the call: cancelled, or how it had
	// ended already.
	State string `json:"state"`
}

func (s *Server) taskCancel(ctx context.Context, _ mcp.CallToolRequest, a *taskArgs) (any, string, error) {
	t := s.tasks.find(a.TaskID)
	if t == nil {
		return nil, "", fmt.Errorf("no task %q: only the last %d tasks are kept", a.TaskID, maxTasks)
	}
	stopped, err := t.stop(sessionOwner(ctx))
	if err != nil {
		return nil, "", err
	}
	if !stopped {
		t.mu.Lock()
		st := t.state
		t.mu.Unlock()
		return cancelResult{TaskID: t.id, State: st}, fmt.Sprintf("task %s is not running in the background (%s)", t.id, st), nil
	}
	// The task ends once its tool and what it started are gone.
	select {
	case <-t.over:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	t.mu.Lock()
	st := t.state
	t.mu.Unlock()
	return cancelResult{TaskID: t.id, State: st}, fmt.Sprintf("task %s %s", t.id, st), nil
}

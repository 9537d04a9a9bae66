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

	"github.com/hilrun/hilrun/pkg/gate/process"
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

// --- registration ---

func (s *Server) addPIOTools() {
	projectDir := mcp.WithString("project_dir", mcp.Required(), mcp.Description("The PlatformIO project folder (holding platformio.ini), under a --root: absolute, or relative to the first --root."))
	env := mcp.WithString("env", mcp.Description("A platformio.ini environment ([env:NAME]); default: the project's default environments. environment is accepted too."))
	envAlias := mcp.WithString("environment", mcp.Description("Same as env."))
	background := mcp.WithBoolean("background", mcp.Description("Return {task_id} at once and run in the background; follow it with task_status (the last lines of output, then the result), stop it with task_cancel."))
	readOnly := func(ro bool) []mcp.ToolOption {
		return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(ro), mcp.WithOpenWorldHintAnnotation(false)}
	}
	host := " Runs PlatformIO (pio) on the host: needs --allow-exec and a --root."
	taskNote := " The whole output is the resource log_resource; a failing run is a result (ok false), a tool error means pio did not run (refused, not installed, cancelled)."

	s.addTool(mcp.NewTool("list_boards", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("List PlatformIO boards"),
		mcp.WithDescription("List the boards PlatformIO knows (pio boards --json-output): id, name, platform, MCU, clock, flash and RAM in bytes, frameworks, vendor, URL, debug tools." + host),
		mcp.WithString("filter", mcp.Description("Only boards whose data mention this text (an id, MCU, vendor, platform or framework).")),
		outputSchema[boardsResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioListBoards))

	s.addTool(mcp.NewTool("get_board_info", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Show a PlatformIO board"),
		mcp.WithDescription("Show one board by its exact id (pio boards --json-output): an unknown id is an error naming boards that mention it." + host),
		mcp.WithString("board_id", mcp.Required(), mcp.Description("The board id, as in platformio.ini's board = (esp32dev, uno, nucleo_f401re).")),
		outputSchema[pio.Board](),
	}, readOnly(true)...)...), toolHandler(s, s.pioBoardInfo))

	s.addTool(mcp.NewTool("list_devices", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("List serial devices (PlatformIO)"),
		mcp.WithDescription("List serial ports as PlatformIO sees them (pio device list --json-output): port, description, hwid, VID, PID, serial number, and the likely board or adapter for a well-known VID:PID. list_ports does the same without PlatformIO." + host),
		outputSchema[devicesResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioListDevices))

	s.addTool(mcp.NewTool("system_info", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Show PlatformIO system information"),
		mcp.WithDescription("Show PlatformIO's version, Python, system type, core folder and counts of installed platforms and tools (pio system info --json-output)." + host),
		outputSchema[systemInfoResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioSystemInfo))

	s.addTool(mcp.NewTool("search_libraries", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Search PlatformIO libraries"),
		mcp.WithDescription("Search the PlatformIO registry for libraries (pio pkg search \"type:library QUERY\"): owner, name, type, latest version, publication date, description; 10 a page." + host),
		mcp.WithString("query", mcp.Required(), mcp.Description("What to look for: words, or the registry's fields (name:OneWire, keyword:sensor, framework:arduino).")),
		mcp.WithInteger("page", mcp.Min(1), mcp.Description("The page of results; default 1.")),
		outputSchema[pio.SearchResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioSearch))

	s.addTool(mcp.NewTool("init_project", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Create a PlatformIO project"),
		mcp.WithDescription("Create (or add a board to) a PlatformIO project (pio project init -d DIR -b BOARD [-O framework=...]), which may download the board's platform. The board is checked first: an unknown board is an error before anything is written. The folder is made when missing; its parent must be under a --root." + host + taskNote),
		mcp.WithString("board", mcp.Required(), mcp.Description("The board id (see list_boards).")),
		mcp.WithString("framework", mcp.Description("arduino, espidf, zephyr, stm32cube...; default: none set.")),
		mcp.WithString("project_dir", mcp.Required(), mcp.Description("The project folder, under a --root.")),
		background,
		outputSchema[pioResult](),
		mcp.WithDestructiveHintAnnotation(false),
	}, readOnly(false)...)...), toolHandler(s, s.pioInitProject))

	s.addTool(mcp.NewTool("get_project_config", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Show a PlatformIO project's configuration"),
		mcp.WithDescription("Show platformio.ini as PlatformIO reads it (pio project config --json-output): environments, and each section's options with their values (list options also as values)." + host),
		projectDir,
		outputSchema[configResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioProjectConfig))

	s.addTool(mcp.NewTool("clean_project", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Clean a PlatformIO project"),
		mcp.WithDescription("Delete a project's build output (pio run -d DIR [-e ENV] -t clean)." + host + taskNote),
		projectDir, env, envAlias, background,
		outputSchema[pioResult](),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.pioClean))

	s.addTool(mcp.NewTool("upload_filesystem", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Upload a PlatformIO filesystem image"),
		mcp.WithDescription("Build the data folder into a SPIFFS/LittleFS image and write it to the board (pio run -d DIR [-e ENV] -t uploadfs [--upload-port PORT]). The port is held for the upload; a port open as a connection must be closed first. Refused when the server is --read-only." + host + taskNote),
		projectDir, env, envAlias, background,
		mcp.WithString("port", mcp.Description("The upload port path; default: PlatformIO's upload_port or the one it finds.")),
		outputSchema[pioResult](),
		mcp.WithDestructiveHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.pioUploadFS))

	s.addTool(mcp.NewTool("check_project", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Check a PlatformIO project (static analysis)"),
		mcp.WithDescription("Run PlatformIO's static analysis (pio check -d DIR [-e ENV] --json-output) and return its defects as data: per environment and tool, each defect's severity (high, medium, low), category, file, line, column, id (the tool's rule) and message." + host + taskNote),
		projectDir, env, envAlias, background,
		outputSchema[pioResult](),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(true)...)...), toolHandler(s, s.pioCheck))

	s.addTool(mcp.NewTool("run_tests", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Run a PlatformIO project's unit tests"),
		mcp.WithDescription("Build, upload and run the project's unit tests (pio test -d DIR [-e ENV] --json-output), on the board or natively, as a run of a pio_test step: returns every test case (tests: suite, name, status PASSED, FAILED, SKIPPED or ERRORED, message, file, line), and the run's report (report_resource) holds them too. port names a connection (id, label or path) or a port path: a connection's console lends the port for the run and takes it back after. Refused when the server is --read-only (it flashes the board)." + host + taskNote),
		projectDir, env, envAlias, background,
		mcp.WithArray("filter", mcp.WithStringItems(), mcp.Description("Only tests matching these patterns (pio test -f).")),
		mcp.WithArray("ignore", mcp.WithStringItems(), mcp.Description("Leave out tests matching these patterns (pio test -i).")),
		mcp.WithString("port", mcp.Description("The upload port (--upload-port): a connection id, label or port path; held for the run.")),
		mcp.WithString("test_port", mcp.Description("The port the test results come from (--test-port); held for the run.")),
		mcp.WithBoolean("without_uploading", mcp.Description("Run the tests already on the board.")),
		lockTimeout(),
		outputSchema[buildResult](),
		mcp.WithDestructiveHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.pioRunTests))

	lib := mcp.WithString("library", mcp.Required(), mcp.Description("A library name or specification: owner/name, owner/name@^1.2.3, a Git URL."))
	for _, v := range []struct {
		tool, title, what string
		verb              pio.LibraryVerb
	}{
		{"install_library", "Install a library into a PlatformIO project", "Install a library into the project and add it to lib_deps (pio pkg install -d DIR [-e ENV] -l LIB).", pio.Install},
		{"uninstall_library", "Uninstall a library from a PlatformIO project", "Remove a library from the project and from lib_deps (pio pkg uninstall -d DIR [-e ENV] -l LIB).", pio.Uninstall},
		{"update_library", "Update a library of a PlatformIO project", "Update a library of the project within its specification (pio pkg update -d DIR [-e ENV] -l LIB).", pio.Update},
	} {
		s.addTool(mcp.NewTool(v.tool, append([]mcp.ToolOption{
			mcp.WithTitleAnnotation(v.title),
			mcp.WithDescription(v.what + " Always scoped to the project, never global." + host + taskNote),
			projectDir, env, envAlias, lib, background,
			outputSchema[pioResult](),
			mcp.WithDestructiveHintAnnotation(v.verb == pio.Uninstall),
		}, readOnly(false)...)...), toolHandler(s, s.pioLibrary(v.verb, v.tool)))
	}

	s.addTool(mcp.NewTool("list_installed_libraries", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("List a PlatformIO project's libraries"),
		mcp.WithDescription("List the libraries installed for the project, per environment, with their dependencies (pio pkg list -d DIR [-e ENV] --only-libraries): name, version, the specification required, depth (0 for lib_deps)." + host),
		projectDir, env, envAlias,
		outputSchema[librariesResult](),
	}, readOnly(true)...)...), toolHandler(s, s.pioListLibraries))

	s.addTool(mcp.NewTool("start_monitor", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Start a serial monitor"),
		mcp.WithDescription("Open a serial connection to watch a board, as serial_open does (the same connection: read it with serial_read or serial_expect, stop it with stop_monitor or serial_close)."),
		mcp.WithString("port", mcp.Required(), mcp.Description("A device path such as /dev/ttyUSB0 (see list_devices or list_ports), or a device of the server's bench file.")),
		mcp.WithInteger("baud_rate", mcp.Min(1), mcp.Description("The baud rate; default 115200. baud is accepted too.")),
		mcp.WithInteger("baud", mcp.Min(1), mcp.Description("Same as baud_rate.")),
		mcp.WithString("label", mcp.Description("A name for the connection.")),
		mcp.WithString("line_ending", mcp.Enum("lf", "crlf", "cr", "none"), mcp.Description("What newline sends; default lf.")),
		outputSchema[openResult](),
		mcp.WithDestructiveHintAnnotation(false),
	}, readOnly(false)...)...), toolHandler(s, s.serialOpen))

	s.addTool(mcp.NewTool("stop_monitor", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Stop a serial monitor"),
		mcp.WithDescription("Close a connection start_monitor (or serial_open) opened, as serial_close does. Its log stays readable, as long as it is among the logs of the last 50 connections closed."),
		mcp.WithString("port", mcp.Description("The port path, connection id or label; may be left out when one connection is open. connection is accepted too.")),
		mcp.WithString("connection", mcp.Description("Same as port.")),
		lockTimeout(),
		outputSchema[closeResult](),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.stopMonitor))

	s.addTool(mcp.NewTool("acquire_lock", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Hold a port across calls"),
		mcp.WithDescription("Hold a port for this MCP session across several calls: other sessions' calls on it get \"busy\" until release_lock, until the lock lapses (ttl_ms, default 10 minutes; call acquire_lock again to renew it), or until this session ends (then it is released by itself). A console_release and console_hold of the port by this session keep the lock."),
		mcp.WithString("port", mcp.Required(), mcp.Description("A port path, or a connection id or label.")),
		mcp.WithString("reason", mcp.Description("Why, shown to whoever finds the port busy.")),
		mcp.WithInteger("ttl_ms", mcp.Min(1), mcp.Max(float64(maxLockTTL.Milliseconds())), mcp.Description("The lock lapses this many milliseconds from now unless acquire_lock is called again; default 600000 (10 minutes), at most 86400000 (24 hours).")),
		outputSchema[lockResult](),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.acquireLock))

	s.addTool(mcp.NewTool("release_lock", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Let go of a port held with acquire_lock"),
		mcp.WithDescription("Release a port this session holds with acquire_lock."),
		mcp.WithString("port", mcp.Required(), mcp.Description("The port path, or a connection id or label, given to acquire_lock.")),
		outputSchema[lockResult](),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.releaseLock))

	s.addTool(mcp.NewTool("task_cancel", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Cancel a background task"),
		mcp.WithDescription("Stop a task started with background: true (build, upload, clean_project, check_project, run_tests, library verbs...): its tool and what it started are stopped, and the call returns once the task has ended (state cancelled). Only the session that started the task may cancel it, until that session ends."),
		mcp.WithString("task_id", mcp.Required(), mcp.Description("The task_id the tool returned.")),
		outputSchema[cancelResult](),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
	}, readOnly(false)...)...), toolHandler(s, s.taskCancel))
}

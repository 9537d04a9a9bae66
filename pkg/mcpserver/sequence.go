package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// --- run_sequence ---

type runArgs struct {
	Path          string            `json:"path"`
	Vars          map[string]any    `json:"vars"`
	Ports         map[string]string `json:"ports"`
	Probes        map[string]string `json:"probes"`
	LockTimeoutMS *int64            `json:"lock_timeout_ms"`
}

func stringVars(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

func (s *Server) runSequence(ctx context.Context, req mcp.CallToolRequest, a *runArgs) (any, string, error) {
	if a.Path == "" {
		return nil, "", errors.New("path is required: a sequence file under a --root")
	}
	real, err := s.cfg.Policy.ResolveFile(a.Path)
	if err != nil {
		return nil, "", err
	}
	vars := stringVars(a.Vars)
	seq, err := steps.Load(real, steps.LoadOptions{Vars: steps.Names(vars)})
	if err != nil {
		return nil, "", err
	}
	if err := s.checkFileProbes(seq.Probes); err != nil {
		return nil, "", err
	}
	if err := s.checkClientCameras(seq.Cameras, nil); err != nil {
		return nil, "", err
	}
	bench := s.cfg.Bench
	if bench == nil {
		p := filepath.Join(filepath.Dir(real), steps.BenchFile)
		if _, err := os.Lstat(p); err == nil {
			// Read as the sequence was: a link that leads out of the
			// roots is refused before a byte of its target is read.
			rp, err := s.cfg.Policy.ResolveFile(p)
			if err != nil {
				return nil, "", err
			}
			if bench, err = steps.LoadBench(rp); err != nil {
				return nil, "", err
			}
			// A bench file beside the sequence is a file under a root like
			// the sequence, not the operator's --bench: the same rules
			// apply to its probes.
			var probes []*steps.Probe
			for _, name := range slices.Sorted(maps.Keys(bench.Probes)) {
				probes = append(probes, bench.Probes[name])
			}
			if err := s.checkFileProbes(probes); err != nil {
				return nil, "", err
			}
			// Its cameras too.
			var cams []*steps.Camera
			for _, name := range slices.Sorted(maps.Keys(bench.Cameras)) {
				cams = append(cams, bench.Cameras[name])
			}
			if err := s.checkClientCameras(cams, nil); err != nil {
				return nil, "", err
			}
		}
	}
	for _, port := range a.Ports {
		if err := s.checkPort(port); err != nil {
			return nil, "", err
		}
	}
	if len(a.Probes) > 0 && s.cfg.Policy.ReadOnly {
		return nil, "", refused("probes: a read-only server does not attach to OpenOCDs it was not given")
	}
	for _, name := range slices.Sorted(maps.Keys(a.Probes)) {
		addr := a.Probes[name]
		if err := s.cfg.Policy.CheckProbeAddr(addr, s.ownProbeAddr(addr)); err != nil {
			return nil, "", fmt.Errorf("probes: %s: %w", name, err)
		}
	}
	return s.execute(ctx, req, seq, execOptions{vars: vars, bound: true, sources: plan.Sources{Bench: bench, Ports: a.Ports, OpenOCDs: a.Probes}, lockWait: lockWait(a.LockTimeoutMS)})
}

// ownProbeAddr reports whether the server itself binds a probe to the
// debugger at addr: its --sim or --qemu, or a probe of its --bench file.
func (s *Server) ownProbeAddr(addr string) bool {
	if addr == "" {
		return false
	}
	if addr == s.cfg.DefaultOpenOCD || addr == s.cfg.DefaultGDB {
		return true
	}
	if s.cfg.Bench != nil {
		for _, p := range s.cfg.Bench.Probes {
			if p != nil && (p.OpenOCD == addr || p.GDB == addr) {
				return true
			}
		}
	}
	return false
}

// checkFileProbes refuses what a file under a root (a sequence, or a bench
// file beside it) may not say about its probes when a client runs it:
// which program to launch and its extra arguments and commands belong in
// the operator's --bench file. Probe ELF files must lie under a root.
func (s *Server) checkFileProbes(probes []*steps.Probe) error {
	for _, p := range probes {
		if p.LaunchesQEMU() {
			return refused("%s: probe %s: launch: {qemu: ...} starts a program on the host, which a client's file may not: start hilrun mcp with --qemu FILE, or with --bench naming the probe's gdb: HOST:PORT", p.Pos, p.Name)
		}
		if l := p.Launch; l != nil && (l.Binary != "" || len(l.Args) > 0 || len(l.Commands) > 0) {
			return refused("%s: probe %s: launch binary, args and commands are only taken from the server's --bench file", p.Pos, p.Name)
		}
		if l := p.Launch; l != nil {
			// OpenOCD runs a configuration file as Tcl: only its own
			// scripts, or with raw Tcl allowed files under a root.
			for i, c := range l.Config {
				real, err := s.cfg.Policy.CheckLaunchConfig(c, filepath.Dir(p.Pos.File))
				if err != nil {
					return fmt.Errorf("%s: probe %s: %w", p.Pos, p.Name, err)
				}
				l.Config[i] = real
			}
			if strings.ContainsFunc(l.AdapterSerial, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return refused("%s: probe %s: adapter_serial %q holds control characters", p.Pos, p.Name, l.AdapterSerial)
			}
		}
		if p.ELF != "" {
			real, err := s.cfg.Policy.ResolveFile(p.ELF)
			if err != nil {
				return fmt.Errorf("%s: probe %s: %w", p.Pos, p.Name, err)
			}
			p.ELF = real
		}
	}
	return nil
}

// --- validate_sequence ---

type validateArgs struct {
	Path    string   `json:"path"`
	Content string   `json:"content"`
	Format  string   `json:"format"`
	Vars    []string `json:"vars"`
}

type validationError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

type validateResult struct {
	Valid   bool              `json:"valid"`
	Name    string            `json:"name,omitempty"`
	Steps   int               `json:"steps"`
	Devices []string          `json:"devices"`
	Probes  []string          `json:"probes"`
	Errors  []validationError `json:"errors"`
}

func (s *Server) validateSequence(ctx context.Context, req mcp.CallToolRequest, a *validateArgs) (any, string, error) {
	var seq *steps.Sequence
	var err error
	opts := steps.LoadOptions{Vars: a.Vars}
	switch {
	case a.Path != "" && a.Content != "":
		return nil, "", errors.New("give path or content, not both")
	case a.Path != "":
		real, rerr := s.cfg.Policy.ResolveFile(a.Path)
		if rerr != nil {
			return nil, "", rerr
		}
		seq, err = steps.Load(real, opts)
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, "", err
		}
	case a.Content != "":
		name := "<content>.yaml"
		switch strings.ToLower(a.Format) {
		case "json":
			name = "<content>.json"
		case "", "yaml", "yml":
		default:
			return nil, "", fmt.Errorf("format %q: want yaml or json", a.Format)
		}
		seq, err = steps.Parse(name, []byte(a.Content), opts)
	default:
		return nil, "", errors.New("give path (a sequence file under a --root) or content (YAML or JSON text)")
	}
	out := validateResult{Devices: []string{}, Probes: []string{}, Errors: []validationError{}}
	if err != nil {
		var el steps.ErrorList
		if !errors.As(err, &el) {
			return nil, "", err
		}
		var lines []string
		for _, e := range el {
			out.Errors = append(out.Errors, validationError{File: e.Pos.File, Line: e.Pos.Line, Column: e.Pos.Col, Message: e.Msg})
			lines = append(lines, e.Error())
		}
		return out, fmt.Sprintf("invalid: %d problems\n%s", len(el), strings.Join(lines, "\n")), nil
	}
	out.Valid = true
	out.Name = seq.Name
	out.Steps = steps.Written(seq)
	for _, d := range seq.Devices {
		out.Devices = append(out.Devices, d.Name)
	}
	for _, p := range seq.Probes {
		out.Probes = append(out.Probes, p.Name)
	}
	return out, fmt.Sprintf("valid: %s, %s", seq.Name, steps.CountedPlan(seq)), nil
}

// --- running ---

type execOptions struct {
	vars  map[string]string
	label func(steps.Pos) string
	// sources are the call's own bindings when bound is set (run_sequence's
	// bench, ports and probes); else the server's bench file binds, and a
	// client's cameras are refused first.
	sources  plan.Sources
	bound    bool
	lockWait time.Duration
	// buildLog, when set, is where the output of build and upload tools
	// goes; else a file per step in the run's build folder.
	buildLog string
	// buildLine, when set, receives each line build and upload tools print.
	buildLine func(string)
	// keepSteps keeps every step's result in the runner's result, for
	// one-step runs that read it.
	keepSteps bool
}

// devicePlan is how a device of a sequence is reached: an open connection
// it borrows, or a port it opens for the run.
type devicePlan struct {
	conn *connection
	port string
}

// borrowed is an open connection lent to a run: the run must not close it.
type borrowed struct {
	Console
	c *connection
}

func (borrowed) Close() error { return nil }

// CatchUp waits until what the connection's port holds is in its buffer,
// so a send's reply begins after it (see runner's catchUpper). A
// connection without the ability returns its cursor. The runner never
// syncs a borrowed connection: this run did not open it.
func (b borrowed) CatchUp(ctx context.Context) (int64, error) {
	if cu, ok := b.Console.(interface {
		CatchUp(context.Context) (int64, error)
	}); ok {
		return cu.CatchUp(ctx)
	}
	return b.Cursor(), nil
}

// LastSend is where the reply to the last send on the connection began, in
// this run or an earlier one: the runner waits for the prompt after it.
func (b borrowed) LastSend() (runner.SendMark, bool) {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	return b.c.lastSend, b.c.sent
}

// SetLastSend keeps m for the next run on the connection.
func (b borrowed) SetLastSend(m runner.SendMark) {
	b.c.mu.Lock()
	b.c.lastSend, b.c.sent = m, true
	b.c.mu.Unlock()
}

// lend gives device d the prompt and echo of connection c, unless the
// sequence sets them.
func lend(d *steps.Device, c *connection) {
	if d.LineEnding == "" {
		d.LineEnding = c.lineEnding
	}
	if d.Prompt == nil {
		d.Prompt = c.prompt
	}
	if !d.Echo {
		d.Echo = c.echo
	}
}

// Unwrap is the connection's console, for the runner's modem line steps.
func (b borrowed) Unwrap() runner.Console { return b.Console }

func (s *Server) planDevices(ctx context.Context, seq *steps.Sequence) (map[string]devicePlan, error) {
	plans := map[string]devicePlan{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range seq.Devices {
		if c := s.findConnLocked(d.Name); c != nil && (d.Port == "" || d.Port == c.port || d.Implicit) {
			lend(d, c)
			plans[d.Name] = devicePlan{conn: c, port: c.port}
			continue
		}
		if d.Port == "" && d.USB != nil {
			p, err := s.resolveUSB(ctx, d)
			if err != nil {
				return nil, fmt.Errorf("device %s: %w", d.Name, err)
			}
			d.Port = p
		}
		if d.Port == "" {
			if s.cfg.DefaultPort == "" {
				return nil, fmt.Errorf("device %s has no port: open a connection with serial_open and name it in to:, give to: a port path, pass devices: {%s: {port: PATH}}, or start hilrun mcp with --sim or a --bench binding it", d.Name, d.Name)
			}
			d.Port = s.cfg.DefaultPort
		}
		if c := s.findConnLocked(d.Port); c != nil {
			lend(d, c)
			plans[d.Name] = devicePlan{conn: c, port: c.port}
			continue
		}
		if err := s.checkPort(d.Port); err != nil {
			return nil, err
		}
		plans[d.Name] = devicePlan{port: d.Port}
	}
	return plans, nil
}

// plansCurrent reports whether plans still match the open connections:
// false when a port the run would open has been opened as a connection
// since (plan again to borrow it), an error when a connection the run
// would borrow has been closed.
func (s *Server) plansCurrent(plans map[string]devicePlan) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		p := plans[name]
		if p.conn != nil && s.conns[p.conn.id] != p.conn {
			return false, fmt.Errorf("device %s: connection %s (%s) was closed while this sequence waited for its ports", name, p.conn.id, p.conn.port)
		}
	}
	for _, p := range plans {
		if p.conn == nil && s.findConnLocked(p.port) != nil {
			return false, nil
		}
	}
	return true, nil
}

// checkSteps applies the policy to the steps before anything is opened:
// what each step can do (its capabilities in the kind table) must be
// allowed, and the files and folders it names must lie under a root. A
// step whose kind the table does not describe is refused.
func (s *Server) checkSteps(seq *steps.Sequence, label func(steps.Pos) string) error {
	errs := s.checkCameras(seq, label)
	steps.Walk(seq, func(st *steps.Step) {
		where := st.Pos.String()
		if label != nil {
			where = label(st.Pos)
		}
		if err := s.checkStep(seq, st); err != nil {
			errs = append(errs, where+": "+unrefused(err))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(errs, "\n"), ErrRefused)
	}
	return nil
}

// checkStep applies the policy to one step.
func (s *Server) checkStep(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	caps, ok := steps.StepCaps(st)
	if !ok {
		return refused("step kind %q is not described in the capability table, so it is refused", st.Kind)
	}
	// An openocd step, or a monitor step on OpenOCD, is Tcl the policy
	// parses; a monitor step elsewhere is raw (its kind's caps).
	tcl := tclCommand(seq, st)
	if tcl != nil {
		caps = s.commandCaps(tcl)
	}
	if err := p.Allow(string(st.Kind), caps); err != nil {
		return err
	}
	if tcl != nil && tcl.IsStatic() {
		if _, err := p.CheckCommand(tcl.Raw); err != nil {
			return err
		}
	}
	if st.Mem != nil && st.Mem.ELF != "" {
		real, err := p.ResolveFile(st.Mem.ELF)
		if err != nil {
			return err
		}
		setPath(&st.Mem.ELF, real)
	}
	if (st.Kind == steps.KindBuild || st.Kind == steps.KindUpload || st.Kind == steps.KindPIOTest) && st.Build != nil {
		return s.checkBuild(seq, st)
	}
	return s.checkControl(seq, st)
}

// commandCaps is what an openocd: step can do: a raw command where the
// policy sends raw Tcl; else a typed command's effect when its text is
// fixed. A command filled in from variables is checked as it is sent
// (guarded.Command).
func (s *Server) commandCaps(cmd *steps.Template) steps.Cap {
	p := &s.cfg.Policy
	if p.AllowDebugTcl && !p.ReadOnly {
		return steps.CapDebugRaw
	}
	if cmd.IsStatic() {
		if t, err := openocd.ParseTyped(cmd.Raw); err == nil {
			return commandCaps(t)
		}
	}
	return steps.CapMemRead
}

// tclCommand is the OpenOCD Tcl command step st sends: an openocd step's,
// or a monitor step's on a probe that OpenOCD serves (every probe the
// bench file does not bind to a GDB stub ends up on OpenOCD); nil for any
// other step.
func tclCommand(seq *steps.Sequence, st *steps.Step) *steps.Template {
	switch st.Kind {
	case steps.KindOpenOCD:
		return st.OpenOCD
	case steps.KindMonitor:
		if p := seq.Probe(st.To); p == nil || p.GDB == "" {
			return st.Monitor
		}
	}
	return nil
}

// unrefused is err's text without the ErrRefused suffix, for errors that
// are joined and wrapped again.
func unrefused(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+ErrRefused.Error())
}

func (s *Server) execute(ctx context.Context, req mcp.CallToolRequest, seq *steps.Sequence, o execOptions) (any, string, error) {
	out, res, err := s.executeRun(ctx, req, seq, o)
	if err != nil {
		return nil, "", err
	}
	out.Result = formatRun(out, res)
	return out, out.Result, nil
}

// executeRun checks seq against the policy, takes its ports and probes and
// runs it. An error means nothing ran.
func (s *Server) executeRun(ctx context.Context, req mcp.CallToolRequest, seq *steps.Sequence, o execOptions) (*sequenceResult, *runner.SequenceResult, error) {
	pl, fixedKeys, err := s.bindPlan(seq, o)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkPlan(pl, o.label); err != nil {
		return nil, nil, err
	}
	var plans map[string]devicePlan
	var release func()
	// ready is the plan with its devices lent the open connections they
	// name, or given their ports; the checked plan stays as it was.
	var ready *plan.Plan
	for attempt := 0; ; attempt++ {
		var err error
		if ready, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
			var err error
			plans, err = s.planDevices(ctx, seq)
			return seq, err
		}); err != nil {
			return nil, nil, err
		}
		keys := append([]string(nil), fixedKeys...)
		for _, p := range plans {
			keys = append(keys, portKey(realPort(p.port)))
		}
		if release, err = s.locks.acquire(ctx, keys, who(ctx, req), o.lockWait); err != nil {
			return nil, nil, err
		}
		// The plan was made before the ports were ours: while this call
		// waited, serial_open or serial_close may have changed what is
		// open, and a run must neither open a port a connection holds nor
		// borrow a closed connection.
		current, err := s.plansCurrent(plans)
		if err != nil {
			release()
			return nil, nil, err
		}
		if current {
			break
		}
		release()
		if attempt == 2 {
			return nil, nil, errors.New("connections kept opening and closing while this sequence waited for its ports: call again")
		}
	}
	defer release()
	seq = ready.Sequence()

	run := s.runs.start(seq.Name)
	prog := s.newProgress(ctx, req, seq)
	defer prog.stop()
	// Every finished step goes to the run's event stream on disk; the
	// result and the report resource are made from it.
	events, err := results.Create(filepath.Join(run.dir, results.EventFile))
	if err != nil {
		return nil, nil, err
	}
	defer events.Close()
	// The result's steps are collected as they finish.
	summary := newResultSteps()
	// A probe whose session broke (its OpenOCD or GDB stub went away) is
	// reopened by the next user.
	var probeGone atomic.Bool
	// The pictures camera steps took, in order, up to the result's bound.
	var pictures []string
	watch := runner.SinkFunc(func(e runner.Event) {
		if e.Type != runner.StepFinished || e.Step == nil {
			return
		}
		for _, p := range e.Step.Attachments {
			if len(pictures) < maxResultSteps {
				pictures = append(pictures, p)
			}
		}
	})
	logFile := func(st *steps.Step) string {
		if o.buildLog != "" {
			return o.buildLog
		}
		return filepath.Join(run.dir, buildDir, runner.BuildLogName(st))
	}
	line := func(l string) {
		prog.line(l)
		if o.buildLine != nil {
			o.buildLine(l)
		}
	}

	bench := s.cfg.Engine.WithOpen(func(runner.Opener) runner.Opener {
		return func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
			plan := plans[dev.Name]
			if plan.conn != nil {
				return handOver(borrowed{plan.conn.console, plan.conn}, plan.conn.console), nil
			}
			if s.cfg.SerialConfig == nil {
				return nil, errors.New("this server opens no devices of sequences (it was started without their serial settings)")
			}
			cfg := s.cfg.SerialConfig(dev)
			cfg.Path, cfg.LogDir = plan.port, run.dir
			c, err := s.cfg.OpenConsole(ctx, dev.Name, cfg)
			if err != nil {
				return nil, err
			}
			return openedForRun(c), nil
		}
	}).WithOpenProbe(func(runner.ProbeOpener) runner.ProbeOpener {
		return func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
			d, err := s.session(ctx, p)
			if err != nil {
				return nil, err
			}
			return &guarded{d: d, policy: &s.cfg.Policy, tcl: p.Backend() == steps.BackendOpenOCD, broke: func() { probeGone.Store(true) }}, nil
		}
	}).WithBuild(s.builder(logFile, line)).WithCamera(s.camera)
	res := ready.Run(ctx, bench, plan.Output{
		ArtifactDir: filepath.Join(run.dir, artifactDir),
		Sink:        runner.Tee(events, summary, prog, watch),
		KeepSteps:   o.keepSteps,
	})
	if probeGone.Load() {
		for _, p := range seq.Probes {
			s.dropSession(p)
		}
	}
	// Borrowed connections keep their own log; the run keeps what they
	// printed during it.
	for _, t := range res.Transcripts {
		if plan := plans[t.Console]; plan.conn != nil {
			os.WriteFile(filepath.Join(run.dir, serialx.LogName(t.Console)+".log"), t.Data, 0o644)
		}
	}
	if err := events.Close(); err != nil {
		s.logf("run %s: %v", run.id, err)
	}
	out := s.runs.finish(run, res, events.Path(), summary, pictures)
	return out, res, nil
}

// --- results ---

// maxResultSteps and maxResultBytes bound the steps a sequence result
// lists: past maxResultSteps, the result keeps the first and last
// maxResultSteps/2 steps and the steps between that did not pass (up to
// results.DefaultMaxFailures); past maxResultBytes of JSON, steps that did
// not pass are kept first, then the others in order. The result counts the
// steps left out and names the report resource, which has them all.
// Repeats count as one step each: their iterations are summarised by the
// summary rule.
const (
	maxResultSteps = 1000
	maxResultBytes = 1 << 20
)

type sequenceResult struct {
	RunID      string         `json:"run_id"`
	Name       string         `json:"name"`
	Passed     bool           `json:"passed"`
	Status     string         `json:"status"`
	DurationMS float64        `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
	Counts     results.Counts `json:"counts"`
	// Steps are the steps outside repeat iterations, as the JSON report
	// has them, up to StepLimit; StepsLeftOut counts those left out.
	Steps          []results.Step `json:"steps"`
	StepLimit      int            `json:"step_limit"`
	StepBytesLimit int            `json:"step_bytes_limit"`
	StepsLeftOut   int            `json:"steps_left_out,omitempty"`
	LogResources   []string       `json:"log_resources"`
	ReportResource string         `json:"report_resource"`
	// Pictures are the resources of the pictures camera steps took; the
	// tool result also carries them as image content.
	Pictures []string `json:"pictures,omitempty"`
	// Result is the text report, also the tool result's text: a line per
	// listed step (index, status, kind, name, duration, message), the
	// count of steps left out, and a summary line ("passed 12/12 in
	// 1.234s", or "FAILED: 11/12 passed, 1 failed in 1.234s"), made from
	// the fields above. The STM32 debug server's serial_sequence returns
	// such a report as result; agents written for it read it there.
	Result       string `json:"result"`
	picturePaths []string
}

func (r *sequenceResult) pictures() (paths, uris []string) { return r.picturePaths, r.Pictures }

func ms(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// resultSteps collects, as a run goes, the counts and the steps its result
// lists: a results.Summarizer fed the runner's events (the same rule the
// reports apply to the event file, without reading it back), keeping the
// first maxResultSteps/2 steps, a ring of the last maxResultSteps/2, and
// the steps between that did not pass, up to results.DefaultMaxFailures.
type resultSteps struct {
	*results.Summarizer
	head, mid []results.Step
	// tail is a ring of the last steps; next is where the next goes.
	tail   []results.Step
	next   int
	total  int
	counts results.Counts
}

func newResultSteps() *resultSteps {
	r := &resultSteps{}
	half := maxResultSteps / 2
	r.Summarizer = &results.Summarizer{
		OnStep: func(_ int, st *results.Step) {
			r.total++
			if len(r.head) < half {
				r.head = append(r.head, *st)
				return
			}
			if len(r.tail) < half {
				r.tail = append(r.tail, *st)
				return
			}
			old := r.tail[r.next]
			if old.Status != runner.Passed && old.Status != runner.Skipped && len(r.mid) < results.DefaultMaxFailures {
				r.mid = append(r.mid, old)
			}
			r.tail[r.next] = *st
			r.next = (r.next + 1) % half
		},
		OnEnd: func(_ int, _ *results.Sequence, c results.Counts) { r.counts = c },
	}
	return r
}

// fill sets out's counts and steps, within maxResultSteps and
// maxResultBytes.
func (r *resultSteps) fill(out *sequenceResult) {
	r.Close()
	listed := make([]results.Step, 0, len(r.head)+len(r.mid)+len(r.tail))
	listed = append(append(append(append(listed, r.head...), r.mid...), r.tail[r.next:]...), r.tail[:r.next]...)
	out.Counts = r.counts
	out.Steps = withinBytes(listed, maxResultBytes)
	out.StepLimit, out.StepBytesLimit = maxResultSteps, maxResultBytes
	out.StepsLeftOut = r.total - len(out.Steps)
}

// withinBytes keeps of list what fits in limit bytes of JSON: the steps
// that did not pass first, then the others in order; the order of steps is
// kept.
func withinBytes(list []results.Step, limit int) []results.Step {
	// Most lists are far below the limit: a bound of their size, without
	// writing them, says so.
	bound := 0
	for i := range list {
		bound += sizeBound(&list[i])
		if bound > limit {
			break
		}
	}
	if bound <= limit {
		return list
	}
	size := make([]int, len(list))
	total := 0
	for i := range list {
		b, _ := json.Marshal(&list[i])
		size[i] = len(b) + 1
		total += size[i]
	}
	if total <= limit {
		return list
	}
	keep := make([]bool, len(list))
	used := 0
	for _, problems := range []bool{true, false} {
		for i := range list {
			problem := list[i].Status != runner.Passed && list[i].Status != runner.Skipped
			if problem == problems && used+size[i] <= limit {
				keep[i] = true
				used += size[i]
			}
		}
	}
	out := []results.Step{}
	for i := range list {
		if keep[i] {
			out = append(out, list[i])
		}
	}
	return out
}

// sizeBound is at least the length of st's JSON: its fixed part (field
// names, numbers, statuses) is below 512 bytes, JSON writes a byte of a
// string as at most 6 (\u00XX), and a number as at most 32. A step with a
// repeat summary, or saved values or data other than text, numbers and
// booleans, is measured by writing it.
func sizeBound(st *results.Step) int {
	n := len(st.Path) + len(st.Kind) + len(st.Name) + len(st.Group) + len(st.Message) + len(st.Expected) + len(st.Received) + len(st.File)
	for _, a := range st.Attachments {
		n += len(a) + 1
	}
	extra, ok := 0, st.Repeat == nil
	for _, m := range []map[string]any{st.Saved, st.Data} {
		for k, v := range m {
			if !ok {
				break
			}
			n += len(k) + 2
			switch x := v.(type) {
			case string:
				n += len(x)
			case json.Number:
				n += len(x)
			case bool, nil, int, int64, uint64, float64, uint32, int32, uint, float32:
				extra += 32
			default:
				ok = false
			}
		}
	}
	if !ok {
		b, _ := json.Marshal(st)
		return len(b) + 1
	}
	return 512 + 6*n + extra
}

func formatRun(out *sequenceResult, res *runner.SequenceResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s\n", out.RunID, out.Name)
	for _, st := range out.Steps {
		idx := strconv.Itoa(st.Index)
		if st.Path != idx {
			idx += " (" + st.Path + ")"
		}
		fmt.Fprintf(&b, "%-4s %-11s %-9s %s  %s", idx, st.Status, st.Kind, st.Name, fmtDur(st.DurationMS.D()))
		if st.Message != "" {
			fmt.Fprintf(&b, "  %s", st.Message)
		}
		b.WriteByte('\n')
		if r := st.Repeat; r != nil && r.Iterations > 0 {
			fmt.Fprintf(&b, "     %d iterations: %d passed, %d failed, %d errors; min %s, median %s, p99 %s, max %s\n",
				r.Iterations, r.Passed, r.Failed, r.Errored, fmtDur(r.MinMS.D()), fmtDur(r.MedianMS.D()), fmtDur(r.P99MS.D()), fmtDur(r.MaxMS.D()))
			for _, it := range r.Failures {
				if len(it.Detail) > 0 {
					d := it.Detail[0]
					fmt.Fprintf(&b, "     iteration %d: %s %s %s  %s\n", it.Index, d.Path, d.Status, d.Kind, d.Message)
				}
			}
			if r.MoreFailures > 0 {
				fmt.Fprintf(&b, "     … %d more failing iterations (see the report)\n", r.MoreFailures)
			}
		}
		if st.Status == runner.Failed || st.Status == runner.Errored {
			if st.Expected != "" {
				fmt.Fprintf(&b, "     expected: %s\n", st.Expected)
			}
			if st.Received != "" {
				fmt.Fprintf(&b, "     received: %s\n", clipText(st.Received, 400))
			}
		}
	}
	if out.StepsLeftOut > 0 {
		fmt.Fprintf(&b, "%d steps left out past the result limit (%d steps, %d bytes): the report resource lists them all\n", out.StepsLeftOut, out.StepLimit, out.StepBytesLimit)
	}
	c := out.Counts
	total := fmtDur(res.Duration)
	if out.Passed {
		fmt.Fprintf(&b, "passed %d/%d in %s", c.Passed, c.Total, total)
	} else {
		fmt.Fprintf(&b, "%s: %d/%d passed", strings.ToUpper(out.Status), c.Passed, c.Total)
		for _, x := range []struct {
			n    int
			what string
		}{{c.Failed, "failed"}, {c.Errored, "errors"}, {c.Interrupted, "interrupted"}, {c.Skipped, "skipped"}} {
			if x.n > 0 {
				fmt.Fprintf(&b, ", %d %s", x.n, x.what)
			}
		}
		fmt.Fprintf(&b, " in %s", total)
		if out.Error != "" {
			fmt.Fprintf(&b, " (%s)", out.Error)
		}
	}
	b.WriteString("\nreport: " + out.ReportResource)
	if len(out.LogResources) > 0 {
		b.WriteString("\nlogs: " + strings.Join(out.LogResources, " "))
	}
	return b.String()
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
}

// --- progress ---

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

// writeReport writes the JSON report of a run from its event file.
func writeReport(path, events string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteJSON(f, events, results.Options{}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

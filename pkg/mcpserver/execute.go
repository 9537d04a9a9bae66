package mcpserver

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// execOptions say how a sequence runs: its variables, where its problems
// are named, what binds it, and where its tools' output goes.
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
	// ladder says the sequence runs on the server's own bench, whose
	// health check and recovery ladder go before it (recover.go).
	ladder bool
}

func (s *Server) execute(ctx context.Context, req mcp.CallToolRequest, seq *steps.Sequence, o execOptions) (any, string, error) {
	out, res, err := s.executeRun(ctx, req, seq, o)
	if err != nil {
		return nil, "", err
	}
	out.Result = recoveryText(out.Recovery) + formatRun(out, res)
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
	var rec *results.Recovery
	if o.ladder && s.ladder != nil {
		if rec, err = s.beforeSequence(ctx, req, seq, o.lockWait); err != nil {
			return nil, nil, err
		}
	}
	ready, plans, release, err := s.takePorts(ctx, req, pl, fixedKeys, o.lockWait)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	out, res, err := s.runPlan(ctx, req, ready, plans, o)
	if o.ladder && s.ladder != nil {
		s.afterSequence(seq, res)
	}
	if out != nil {
		out.Recovery = rec
	}
	return out, res, err
}

// takePorts lends the devices of pl the open connections they name, or
// gives them their ports, and takes those ports and the locks of fixedKeys
// (the plan's probes and upload ports), waiting up to wait for them. ready
// is the plan so bound (the checked plan stays as it was); release lets go
// of what was taken.
func (s *Server) takePorts(ctx context.Context, req mcp.CallToolRequest, pl *plan.Plan, fixedKeys []string, wait time.Duration) (ready *plan.Plan, plans map[string]devicePlan, release func(), err error) {
	for range 3 {
		if ready, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
			var err error
			plans, err = s.planDevices(ctx, seq)
			return seq, err
		}); err != nil {
			return nil, nil, nil, err
		}
		keys := append([]string(nil), fixedKeys...)
		for _, p := range plans {
			keys = append(keys, portKey(realPort(p.port)))
		}
		if release, err = s.locks.acquire(ctx, keys, who(ctx, req), wait); err != nil {
			return nil, nil, nil, err
		}
		// The plan was made before the ports were ours: while this call
		// waited, serial_open or serial_close may have changed what is
		// open, and a run must neither open a port a connection holds nor
		// borrow a closed connection.
		current, err := s.plansCurrent(plans)
		if err != nil {
			release()
			return nil, nil, nil, err
		}
		if current {
			return ready, plans, release, nil
		}
		release()
	}
	return nil, nil, nil, errors.New("connections kept opening and closing while this sequence waited for its ports: call again")
}

// runPlan runs ready, whose ports and probes this call holds, as a run of
// the server's: its events on disk, its result, report and pictures kept
// as resources.
func (s *Server) runPlan(ctx context.Context, req mcp.CallToolRequest, ready *plan.Plan, plans map[string]devicePlan, o execOptions) (*sequenceResult, *runner.SequenceResult, error) {
	seq := ready.Sequence()
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
	pictures := &pictureList{}
	// A probe whose session broke (its OpenOCD or GDB stub went away) is
	// reopened by the next user.
	var probeGone atomic.Bool
	bench := s.runBench(run.dir, plans, o, prog, func() { probeGone.Store(true) })
	res := ready.Run(ctx, bench, plan.Output{
		ArtifactDir: filepath.Join(run.dir, artifactDir),
		Sink:        runner.Tee(events, summary, prog, pictures),
		KeepSteps:   o.keepSteps,
	})
	if probeGone.Load() {
		for _, p := range seq.Probes {
			s.dropSession(p)
		}
	}
	keepTranscripts(s.own, run.dir, plans, res)
	if err := events.Close(); err != nil {
		s.logf("run %s: %v", run.id, err)
	}
	out := s.runs.finish(run, res, events.Path(), summary, pictures.paths)
	return out, res, nil
}

// pictureList collects the pictures camera steps take, in order, up to
// the result's bound.
type pictureList struct{ paths []string }

func (l *pictureList) Event(e runner.Event) {
	if e.Type != runner.StepFinished || e.Step == nil {
		return
	}
	for _, p := range e.Step.Attachments {
		if len(l.paths) < maxResultSteps {
			l.paths = append(l.paths, p)
		}
	}
}

// keepTranscripts writes, into the run's folder dir, what each connection
// the run borrowed printed during it: borrowed connections keep their own
// log.
func keepTranscripts(fs files.Policy, dir string, plans map[string]devicePlan, res *runner.SequenceResult) {
	for _, t := range res.Transcripts {
		if plan := plans[t.Console]; plan.conn != nil {
			fs.WriteFile(filepath.Join(dir, serialx.LogName(t.Console)+".log"), t.Data, 0o644)
		}
	}
}

// runBench is the server's bench for one run, whose folder is dir: its
// devices borrow the connections plans name or open their ports, its
// probes are the server's guarded sessions (broke is called when one
// breaks), and its build and upload tools log as o says.
func (s *Server) runBench(dir string, plans map[string]devicePlan, o execOptions, prog *progress, broke func()) runner.Bench {
	logFile := func(st *steps.Step) string {
		if o.buildLog != "" {
			return o.buildLog
		}
		return filepath.Join(dir, buildDir, runner.BuildLogName(st))
	}
	line := func(l string) {
		prog.line(l)
		if o.buildLine != nil {
			o.buildLine(l)
		}
	}
	return s.cfg.Engine.
		WithOpen(func(runner.Opener) runner.Opener { return s.openDevice(dir, plans) }).
		WithOpenProbe(func(runner.ProbeOpener) runner.ProbeOpener { return s.openProbe(broke) }).
		WithBuild(s.builder(logFile, line))
}

// openDevice opens the devices of a run whose folder is dir: a borrowed
// connection's console, lent and handed back, or the device's port, with
// its log in dir.
func (s *Server) openDevice(dir string, plans map[string]devicePlan) runner.Opener {
	return func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
		plan := plans[dev.Name]
		if plan.conn != nil {
			return handOver(borrowed{plan.conn.console, plan.conn}, plan.conn.console), nil
		}
		if s.cfg.SerialConfig == nil {
			return nil, errors.New("this server opens no devices of sequences (it was started without their serial settings)")
		}
		cfg := s.cfg.SerialConfig(dev)
		cfg.Path, cfg.LogDir, cfg.Secrets = plan.port, dir, s.cfg.Secrets
		c, err := s.cfg.OpenConsole(ctx, dev.Name, cfg)
		if err != nil {
			return nil, err
		}
		return openedForRun(c), nil
	}
}

// openProbe opens a run's probes: the server's session of each, guarded by
// its policy; broke is called when a session breaks.
func (s *Server) openProbe(broke func()) runner.ProbeOpener {
	return func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
		d, err := s.session(ctx, p)
		if err != nil {
			return nil, err
		}
		return &guarded{d: d, policy: &s.cfg.Policy, tcl: p.Backend() == steps.BackendOpenOCD, parse: s.cfg.Engine.ParseCommand, broke: broke}, nil
	}
}

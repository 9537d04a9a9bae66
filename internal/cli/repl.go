package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/repl"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// ReplOptions are the inputs of hilrun repl.
type ReplOptions struct {
	File string
	Vars []string
	// BindFlags are --port and --probe (--openocd, --gdb).
	BindFlags
	Bench string
	Sim   bool
	QEMU  QEMUFlags
	// LogDir receives the consoles' raw and timeline logs, as picocom's
	// --logfile; "" keeps none.
	LogDir string
	// Expr bounds each evaluation of an expression.
	Expr ExprFlags
}

func newReplCmd(ios *IO) *cobra.Command {
	opts := &ReplOptions{}
	cmd := &cobra.Command{
		Use:   "repl [flags] [FILE]",
		Short: "Talk to the bench interactively, one step at a time",
		Long: `Open the bench's consoles and probes and run what you type, each line as a
one-step sequence with the same meaning as in a file: send TEXT, expect
PATTERN [TIMEOUT], delay, capture, mdw, mww, read, write, reset, run FILE,
use DEVICE, or a step in flow form such as {send: AT, expect: OK}. Device
output appears live, labelled "NAME│". With FILE, its devices, probes and
vars are loaded and :next runs its steps one by one.

Ctrl-C cancels the running step; Ctrl-D or :quit exits. :raw passes keys
straight to the device until Ctrl-] (as in telnet). :record FILE writes the
steps run so far as a sequence file. History is kept in ~/.hilrun_history,
or $HILRUN_HISTORY. Steps are numbered through the session, as :steps lists
them. --log-dir keeps each console's raw and timeline logs. A line sends
a secret as ${NAME} (--secret NAME=env:VARIABLE, or the bench file's
secrets:); what the session prints, logs, keeps in its history and records
shows ***NAME*** or '*' instead of the value.

When standard input is not a terminal, it is a script: each line is run in
turn and echoed after "hilrun> ", the output has no escape codes, and the
exit code says how the lines went: 0 all passed, 1 a step failed, 2 a line
was not a step or command, 3 a bench error (the most serious wins).`,
		Example: `  hilrun repl --sim
  hilrun repl --port console=/dev/ttyACM0
  hilrun repl --sim sequences/sim/smoke.yaml
  hilrun repl --qemu firmware/qemu/build/qemu.elf
  printf 'send version\nexpect hilrun-sim\n' | hilrun repl --sim`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			return Repl(cmd.Context(), ios, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Vars, "var", nil, "set a variable, `NAME=VALUE` (repeatable)")
	opts.BindFlags.register(f, false)
	f.StringVar(&opts.Bench, "bench", "", "bench `FILE` binding device names to ports")
	f.BoolVar(&opts.Sim, "sim", false, "talk to an in-process virtual board: what nothing else binds goes to it, and its probe gets the board's firmware image for symbols")
	f.StringVar(&opts.LogDir, "log-dir", "", "write raw, timestamped console logs of the session under `DIR`")
	opts.QEMU.register(f)
	opts.Expr.register(f)
	completeSequences(cmd)
	return cmd
}

// Repl binds the bench as hilrun run does and runs an interactive session.
func Repl(ctx context.Context, ios *IO, opts *ReplOptions) error {
	fl, err := parseFlags(opts.Vars, &opts.BindFlags)
	if err != nil {
		return err
	}
	qemuSpec, err := opts.QEMU.spec(opts.Sim)
	if err != nil {
		return invalid(err)
	}
	rs, err := bindSession(opts, fl, qemuSpec)
	if err != nil {
		return err
	}
	defer rs.stop()
	rs.addBenchSecrets(ios.ErrOut)
	if err := rs.startBoards(ctx, ios, opts, qemuSpec); err != nil {
		return err
	}
	// The session's pictures and command output; removed on exit when
	// nothing was written there.
	artifacts, err := os.MkdirTemp("", "hilrun-repl-"+time.Now().UTC().Format("20060102T150405Z")+"-")
	if err != nil {
		return infra(fmt.Errorf("make a folder for pictures and command output: %w", err))
	}
	defer os.Remove(artifacts)
	logDir := ""
	if opts.LogDir != "" {
		logDir = filepath.Join(opts.LogDir, time.Now().UTC().Format("20060102T150405Z")+"-repl")
		if err := os.MkdirAll(logDir, 0o777); err != nil {
			return infra(fmt.Errorf("create the log folder: %w", err))
		}
		fmt.Fprintf(ios.ErrOut, "hilrun: console logs go to %s\n", logDir)
	}
	ctx, t, err := openTerminal(ctx, ios)
	defer t.restore()
	if err != nil {
		return err
	}
	// Each line runs as a sequence of its own; the session's QEMUs started
	// above, once.
	err = repl.Run(ctx, repl.Options{
		Seq: rs.seq, Loaded: opts.File != "", Files: hostGates().Files,
		Bench: engine.NewBench(engine.BenchConfig{Gates: hostGates(), Warn: warnTo(ios.ErrOut), LogDir: logDir, Launched: true, Secrets: rs.secrets}),
		Plan: func(line *steps.Sequence, vars map[string]string) (*plan.Plan, error) {
			return bindPlan(line, plan.Sources{Vars: vars, Limits: rs.limits, Secrets: rs.secrets})
		},
		Secrets:     rs.secrets,
		ArtifactDir: artifacts,
		Check:       engine.CheckRaw,
		BindLine:    rs.bindLine,
		Vars:        fl.vars,
		In:          ios.In, Out: ios.Out,
		History:    repl.LoadHistory(hostGates().Files, historyPath(), 0),
		Given:      rs.given,
		Script:     t.script,
		TermSize:   t.size,
		SessionELF: rs.sessionELF,
	})
	switch {
	case errors.Is(err, repl.ErrOpen):
		return infra(err)
	case t.script && ctx.Err() != nil:
		return silent(ExitInterrupted)
	case errors.Is(err, repl.ErrStepErrored):
		return silent(ExitInfra)
	case errors.Is(err, repl.ErrBadLine):
		return silent(ExitInvalid)
	case errors.Is(err, repl.ErrStepFailed):
		return silent(ExitFailed)
	}
	return err
}

// replSession is a REPL session's bench: its devices and probes, bound
// once, and how each typed line is bound.
type replSession struct {
	// seq is live: it binds its probes to --sim or a QEMU as they start,
	// on a copy of the plan's bindings. given is the file as written, for
	// :record.
	seq, given *steps.Sequence
	bench      *steps.Bench
	limits     plan.Limits
	// secrets are the session's: see addBenchSecrets.
	secrets   *redact.Set
	simProbes bool
	// bindLine binds a typed line's sequence: the bench file names its
	// cameras and power commands, --sim points its cameras at the board's.
	bindLine   func(*steps.Sequence) *steps.Sequence
	sessionELF string
	stops      []func()
}

func (rs *replSession) stop() {
	for i := len(rs.stops) - 1; i >= 0; i-- {
		rs.stops[i]()
	}
}

// bindSession makes the session's sequence (the file's, else one device
// per --port and one probe per --openocd or --gdb) and binds it as hilrun
// run binds a file, checking what run checks before it opens a port.
func bindSession(opts *ReplOptions, fl bindFlags, qemuSpec *qemu.Spec) (*replSession, error) {
	seq := &steps.Sequence{File: "repl", ExpectTimeout: steps.DefaultExpectTimeout, OnFailure: steps.Stop}
	rs := &replSession{limits: plan.Limits{MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}}
	if opts.File != "" {
		seqs, err := loadAll([]string{opts.File}, steps.Names(fl.vars))
		if err != nil {
			return nil, err
		}
		seq = seqs[0]
		rs.given = steps.CloneBindings(seqs[0])
	} else {
		for _, name := range steps.Names(fl.ports) {
			seq.Devices = append(seq.Devices, &steps.Device{Name: name})
		}
		if len(seq.Devices) == 0 {
			seq.Devices = []*steps.Device{{Name: steps.DefaultDevice}}
		}
		for _, name := range append(steps.Names(fl.openocds), steps.Names(fl.gdbs)...) {
			if seq.Probe(name) == nil {
				seq.Probes = append(seq.Probes, &steps.Probe{Name: name})
			}
		}
		if len(seq.Probes) == 0 && (opts.Sim || qemuSpec != nil) {
			seq.Probes = []*steps.Probe{{Name: steps.DefaultProbe}}
		}
	}
	session, bench, err := bindSequence(seq, opts.Bench, fl, rs.limits)
	if err != nil {
		return nil, invalid(err)
	}
	rs.bench, rs.secrets = bench, session.Secrets()
	rs.bindLine = rs.bindBench
	seq = steps.CloneBindings(session.Sequence())
	// --sim binds only what is still unbound, as in run and mcp.
	if opts.Sim {
		for _, p := range seq.Probes {
			if p.Backend() == "" {
				p.AttachOpenOCD(simAddr)
				rs.simProbes = true
			}
		}
	}
	if qemuSpec != nil {
		if seq, err = engine.ReserveQEMU(seq, qemuSpec.Kernel); err != nil {
			return nil, invalid(err)
		}
	}
	for _, d := range seq.Devices {
		if d.Port == "" && d.USB == nil && !opts.Sim && qemuSpec == nil && !engine.LaunchBinds(seq, d.Name) {
			return nil, invalid(fmt.Errorf("device %s has no port: pass --port %s=PATH, bind it in %s, or use --sim or --qemu FILE", d.Name, d.Name, steps.BenchFile))
		}
	}
	if err := engine.CheckProbes(seq); err != nil {
		return nil, invalid(err)
	}
	rs.seq = seq
	return rs, nil
}

// bindBench binds a typed line to the session's bench file.
func (rs *replSession) bindBench(line *steps.Sequence) *steps.Sequence {
	bound, err := bindPlan(line, plan.Sources{Bench: rs.bench})
	if err != nil {
		return line // a bench binds no names it lacks: only flags can fail
	}
	return bound.Sequence()
}

// startBoards starts, for the whole session, the virtual board (--sim),
// the --qemu board and the QEMUs the file's probes launch. A signal while
// they start stops hilrun through its cleanup; once the console runs,
// Ctrl-C is its own.
func (rs *replSession) startBoards(ctx context.Context, ios *IO, opts *ReplOptions, qemuSpec *qemu.Spec) error {
	if opts.Sim {
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		sb, err := startSimBench(sctx, sim.Options{}, rs.simProbes, hostGates())
		stopped := sctx.Err() != nil
		stop()
		if err != nil {
			if stopped {
				return silent(ExitInterrupted)
			}
			return infra(err)
		}
		rs.stops = append(rs.stops, func() { sb.Close() })
		if sb.note != "" {
			fmt.Fprintln(ios.ErrOut, "hilrun: "+sb.note)
		}
		rs.seq = sb.bind(rs.seq)
		if rs.sessionELF, err = simELF(sb, rs.seq); err != nil {
			return infra(err)
		}
		rs.bindLine = func(line *steps.Sequence) *steps.Sequence { return sb.bind(rs.bindBench(line)) }
	}
	if qemuSpec == nil && !launchesQEMU(rs.seq) {
		return nil
	}
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	var board *engine.QEMUBoard
	var err error
	if qemuSpec != nil {
		board, err = startQEMUBoard(sctx, ios.ErrOut, *qemuSpec, "", hostGates())
	}
	var launched *engine.QEMUs
	if err == nil {
		rs.seq, launched, err = engine.StartQEMU(sctx, rs.seq, engine.QEMUOptions{Procs: hostGates().Procs})
	}
	stopped := sctx.Err() != nil
	stop()
	if board != nil {
		rs.stops = append(rs.stops, func() { board.Close(context.Background()) })
	}
	if err != nil {
		if stopped {
			return silent(ExitInterrupted)
		}
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return infra(err)
	}
	rs.stops = append(rs.stops, func() { launched.Close(context.Background()) })
	if board != nil {
		rs.seq = board.Bind(rs.seq)
		rs.bindLine = func(line *steps.Sequence) *steps.Sequence { return board.Bind(rs.bindBench(line)) }
	}
	return nil
}

// replTerminal is the REPL's input: a terminal in raw mode, with its size,
// or a script (no terminal), where a signal stops the step and the session.
type replTerminal struct {
	script  bool
	size    func() (int, int, bool)
	restore func()
}

// openTerminal puts a terminal on standard input into raw mode; without
// one, it returns a context that a signal cancels. t.restore is never nil.
func openTerminal(ctx context.Context, ios *IO) (context.Context, *replTerminal, error) {
	t := &replTerminal{script: true, restore: func() {}}
	if f, ok := ios.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t.script = false
		t.size = func() (int, int, bool) {
			w, h, err := term.GetSize(int(f.Fd()))
			return w, h, err == nil
		}
		state, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return ctx, t, infra(fmt.Errorf("set the terminal to raw mode: %w", err))
		}
		t.restore = func() { term.Restore(int(f.Fd()), state) }
		return ctx, t, nil
	}
	// No terminal turns Ctrl-C into a key: a signal stops the step and
	// the session.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	t.restore = stop
	return ctx, t, nil
}

// historyPath is $HILRUN_HISTORY, else ~/.hilrun_history, else none.
func historyPath() string {
	if p := environ.Host().Get("HILRUN_HISTORY"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".hilrun_history")
}

// launchesQEMU reports whether a probe of seq launches a QEMU.
func launchesQEMU(seq *steps.Sequence) bool {
	for _, p := range seq.Probes {
		if p.LaunchesQEMU() {
			return true
		}
	}
	return false
}

// simELF gives each probe that the virtual board serves and that has no
// ELF file the board's firmware image, so that symbols resolve.
func simELF(sb *simBench, seq *steps.Sequence) (string, error) {
	given := ""
	for _, p := range seq.Probes {
		if p.ELF != "" || sb.probe == "" || p.OpenOCD != sb.probe {
			continue
		}
		path, err := sb.elf()
		if err != nil {
			return "", err
		}
		p.ELF, given = path, path
	}
	return given, nil
}

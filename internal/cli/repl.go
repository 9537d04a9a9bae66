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
	"github.com/hilrun/hilrun/pkg/plan"
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
them. --log-dir keeps each console's raw and timeline logs.

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
	vars := fl.vars
	qemuSpec, err := opts.QEMU.spec(opts.Sim)
	if err != nil {
		return invalid(err)
	}
	seq := &steps.Sequence{File: "repl", ExpectTimeout: steps.DefaultExpectTimeout, OnFailure: steps.Stop}
	var given *steps.Sequence // the file as written, for :record
	if opts.File != "" {
		seqs, err := loadAll([]string{opts.File}, steps.Names(vars))
		if err != nil {
			return err
		}
		seq = seqs[0]
		given = steps.CloneBindings(seqs[0])
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
	limits := plan.Limits{MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}
	session, bench, err := bindSequence(seq, opts.Bench, fl, limits)
	if err != nil {
		return invalid(err)
	}
	// The session is live: it binds its probes to --sim or a QEMU as they
	// start, on a copy of the plan's bindings.
	seq = steps.CloneBindings(session.Sequence())
	// Each line is a sequence of its own: the bench file names its cameras
	// and power commands, --sim points its cameras at the board's.
	bindBench := func(line *steps.Sequence) *steps.Sequence {
		bound, err := bindPlan(line, plan.Sources{Bench: bench})
		if err != nil {
			return line // a bench binds no names it lacks: only flags can fail
		}
		return bound.Sequence()
	}
	bindLine := bindBench
	// --sim binds only what is still unbound, as in run and mcp.
	simProbes := false
	if opts.Sim {
		for _, p := range seq.Probes {
			if p.Backend() == "" {
				p.AttachOpenOCD(simAddr)
				simProbes = true
			}
		}
	}
	if qemuSpec != nil {
		if seq, err = engine.ReserveQEMU(seq, qemuSpec.Kernel); err != nil {
			return invalid(err)
		}
	}
	for _, d := range seq.Devices {
		if d.Port == "" && d.USB == nil && !opts.Sim && qemuSpec == nil && !engine.LaunchBinds(seq, d.Name) {
			return invalid(fmt.Errorf("device %s has no port: pass --port %s=PATH, bind it in %s, or use --sim or --qemu FILE", d.Name, d.Name, steps.BenchFile))
		}
	}
	if err := engine.CheckProbes(seq); err != nil {
		return invalid(err)
	}
	sessionELF := ""
	if opts.Sim {
		// A signal while the board or OpenOCD starts stops hilrun through
		// its cleanup; once the console runs, Ctrl-C is its own.
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		sb, err := startSimBench(sctx, sim.Options{}, simProbes, nil)
		stopped := sctx.Err() != nil
		stop()
		if err != nil {
			if stopped {
				return silent(ExitInterrupted)
			}
			return infra(err)
		}
		defer sb.Close()
		if sb.note != "" {
			fmt.Fprintln(ios.ErrOut, "hilrun: "+sb.note)
		}
		seq = sb.bind(seq)
		if sessionELF, err = simELF(sb, seq); err != nil {
			return infra(err)
		}
		bindLine = func(line *steps.Sequence) *steps.Sequence {
			return sb.bind(bindBench(line))
		}
	}
	// QEMUs: the --qemu board, and those the file's probes launch, for
	// the whole session.
	launches := launchesQEMU(seq)
	if qemuSpec != nil || launches {
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		var board *engine.QEMUBoard
		var err error
		if qemuSpec != nil {
			board, err = startQEMUBoard(sctx, ios.ErrOut, *qemuSpec, "")
		}
		var launched *engine.QEMUs
		if err == nil {
			seq, launched, err = engine.StartQEMU(sctx, seq, engine.QEMUOptions{})
		}
		stopped := sctx.Err() != nil
		stop()
		if board != nil {
			defer board.Close(context.Background())
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
		defer launched.Close(context.Background())
		if board != nil {
			seq = board.Bind(seq)
			bindLine = func(line *steps.Sequence) *steps.Sequence {
				return board.Bind(bindBench(line))
			}
		}
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

	in, out := ios.In, ios.Out
	script := true
	var termSize func() (int, int, bool)
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		script = false
		termSize = func() (int, int, bool) {
			w, h, err := term.GetSize(int(f.Fd()))
			return w, h, err == nil
		}
		state, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return infra(fmt.Errorf("set the terminal to raw mode: %w", err))
		}
		defer term.Restore(int(f.Fd()), state)
	}
	if script {
		// No terminal turns Ctrl-C into a key: a signal stops the step
		// and the session.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	// Each line runs as a sequence of its own; the session's QEMUs started
	// above, once.
	err = repl.Run(ctx, repl.Options{
		Seq: seq, Loaded: opts.File != "",
		Bench: engine.NewBench(engine.BenchConfig{Warn: warnTo(ios.ErrOut), LogDir: logDir, Launched: true}),
		Plan: func(line *steps.Sequence, vars map[string]string) (*plan.Plan, error) {
			return bindPlan(line, plan.Sources{Vars: vars, Limits: limits})
		},
		ArtifactDir: artifacts,
		Check:       engine.CheckRaw,
		BindLine:    bindLine,
		Vars:        vars,
		In:          in, Out: out,
		History:    repl.LoadHistory(historyPath(), 0),
		Given:      given,
		Script:     script,
		TermSize:   termSize,
		SessionELF: sessionELF,
	})
	switch {
	case errors.Is(err, repl.ErrOpen):
		return infra(err)
	case script && ctx.Err() != nil:
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

// historyPath is $HILRUN_HISTORY, else ~/.hilrun_history, else none.
func historyPath() string {
	if p := os.Getenv("HILRUN_HISTORY"); p != "" {
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

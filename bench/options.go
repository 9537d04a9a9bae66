package bench

import (
	"context"
	"io"
	"os"
	"os/exec"
	"time"
)

// Options configure a benchmark run. Zero values mean the defaults noted.
type Options struct {
	// Only lists the scenarios to run (see Scenarios); empty runs all of
	// them.
	Only []string
	// N is the number of measured round trips per side in (a); 0 means 2000.
	N int
	// Rounds is how many alternating blocks each side's samples are split
	// into in (a) and (c); 0 means 4.
	Rounds int
	// Warmup is the number of unmeasured round trips that start each block
	// of (a); 0 means 50. Blocks of (c) start with 3 unmeasured pairs.
	Warmup int
	// SearchSize is the stream length in bytes in (b); 0 means 25,000,000.
	SearchSize int64
	// SmallSize is the shorter stream (b) also uses for regular expression
	// searches, which pexpect does in quadratic time; 0 means SearchSize/10.
	SmallSize int64
	// SearchReps is how many times each search of (b) runs; 0 means 3. The
	// pexpect regular expression search of SearchSize bytes runs once.
	SearchReps int
	// Limit bounds each search of (b); 0 means 180 s.
	Limit time.Duration
	// DelayN is the number of measured delays per side and delay length in
	// (c); 0 means 300.
	DelayN int
	// Delays are the delay lengths of (c); nil means 1 ms, 10 ms, 100 ms.
	Delays []time.Duration
	// StreamFor is how long (d) keeps streaming; 0 means 10 s.
	StreamFor time.Duration
	// StreamChunk is the size in bytes of each `stream` command of (d); 0
	// means 20,000,000.
	StreamChunk int64
	// WaitVariants adds diagnostic sides to scenario (c): the pairs sent
	// through a serialx console with four ways of waiting, to separate
	// the runner's overhead from the effect of its waiting method.
	WaitVariants bool
	// Waits adds only the diagnostic sides of (c) named here (see
	// WaitNames).
	Waits []string
	// Hops records, in (c), the wall-clock time of every hop of each pair
	// of the runner's side (the sends, the delay's start, its wake-up, its
	// end) and reports where the error comes from (DelaySeries.Hops).
	Hops bool
	// BoardNormal reads the board's console at normal priority. By
	// default it reads at real-time priority when the process may
	// (sim.Options.RealtimeRx), so that the board stamps each line when
	// it arrived and the instrument is not the tail of (c) and (l).
	BoardNormal bool
	// Realtime adds to (c) and (l) the runner's side as hilrun run
	// --realtime runs it (SCHED_FIFO waits, locked memory).
	Realtime bool
	// GoLoop adds to (l) a diagnostic side: a Go loop of the C client's
	// system calls (see everyGo), which tells the Go runtime's share of
	// the period error from hilrun's.
	GoLoop bool
	// GoLoopPoller adds to (l) the Go loop twice more: with the port's
	// descriptor registered with Go's poller and the lines written through
	// it, and with the port watched for input only, as hilrun's console
	// watches it (see everyGo).
	GoLoopPoller bool
	// Baseline is a hilbench executable built from another commit. (a)
	// and (l) then run its hilrun run side too, in the same rounds, and
	// give hilrun's verdicts against it: an A/B test of a change. (b) runs
	// its full-size hilrun run searches too, each against this build's in
	// the same rounds.
	Baseline string
	// AA adds to (a), (c) and (l) a second C client and to (b) a second
	// raw read, measured in the same rounds as the first: their verdict
	// against the first is an A/A test, the spread of a verdict that noise
	// alone gives in this run, against which hilrun's verdicts are read.
	AA bool
	// MemN is the number of measured reads per hilrun side in (e); 0
	// means 500.
	MemN int
	// MemProcN is the number of measured reads by an OpenOCD process each
	// in (e); 0 means 100.
	MemProcN int
	// MemRounds is how many alternating blocks each side of (e) is split
	// into, each with a fresh board and OpenOCD; 0 means 8. Latency moves
	// from block to block (with where the scheduler puts the board, OpenOCD
	// and the client), so more blocks give steadier medians.
	MemRounds int
	// ToggleN is the number of LED periods per run in (f); 0 means 200.
	ToggleN int
	// ToggleEvery is the LED period in (f); 0 means 10 ms.
	ToggleEvery time.Duration
	// ToggleReps is how many runs of ToggleN periods each side makes in
	// (f), alternating; 0 means 3.
	ToggleReps int
	// PeriodN is the number of periods per side in (l); 0 means 400.
	PeriodN int
	// PeriodEvery is the period of (l); 0 means 10 ms.
	PeriodEvery time.Duration
	// BarrierN is the number of measured barrier crossings per side in
	// (u); 0 means 300.
	BarrierN int
	// GapN is the number of send/expect steps per side and round in (v);
	// 0 means 300.
	GapN int
	// Hilrun is the hilrun executable (v) runs; "" builds one from this
	// module (go build ./cmd/hilrun) into the work directory.
	Hilrun string
	// Runs repeats the scenarios that many times and reports the goals'
	// verdicts over the runs (see Goals); 0 means 1.
	Runs int
	// OpenOCD is the OpenOCD executable for (e) and (f); "" means
	// "openocd".
	OpenOCD string
	// Device is the board the serial scenarios (a), (c), (l) and (v) run
	// on: DeviceGo (""), hilrun's virtual board, or DevicePython, a small
	// Python shell on a pty (pyboard.py) that hilrun did not write.
	Device string
	// BoardPython is the interpreter of the Python board and of the
	// standard-library Python sides; "" means Python.
	BoardPython string
	// Python is the interpreter for the pexpect scripts (see FindPython);
	// "" runs no pexpect side.
	Python string
	// Expect is Tcl expect's executable for the Tcl expect sides of (a)
	// and (c); "" runs none.
	Expect string
	// CC is the C compiler that builds the C client (floor.c) for the
	// floor sides of (a), (c) and (l); "" runs none.
	CC string
	// Child returns the command that runs a hilrun side with args (see
	// ChildEnv); nil re-executes the running binary with ChildEnv=1.
	Child func(ctx context.Context, args ...string) *exec.Cmd
	// WorkDir receives the pexpect scripts and the logs of (d); "" means a
	// temporary directory that is removed at the end.
	WorkDir string
	// Command is the command line that reproduces the run, for the report.
	Command string
	// Progress receives a line per measured block; nil discards them.
	Progress io.Writer
}

func (o *Options) defaults() {
	if o.N <= 0 {
		o.N = 2000
	}
	if o.Rounds <= 0 {
		o.Rounds = 4
	}
	if o.Warmup <= 0 {
		o.Warmup = 50
	}
	if o.SearchSize <= 0 {
		o.SearchSize = 25_000_000
	}
	if o.SmallSize <= 0 {
		o.SmallSize = o.SearchSize / 10
	}
	if o.SearchReps <= 0 {
		o.SearchReps = 3
	}
	if o.Limit <= 0 {
		o.Limit = 180 * time.Second
	}
	if o.DelayN <= 0 {
		o.DelayN = 300
	}
	if len(o.Delays) == 0 {
		o.Delays = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond}
	}
	if o.StreamFor <= 0 {
		o.StreamFor = 10 * time.Second
	}
	if o.StreamChunk <= 0 {
		o.StreamChunk = 20_000_000
	}
	if o.MemN <= 0 {
		o.MemN = 500
	}
	if o.MemProcN <= 0 {
		o.MemProcN = 100
	}
	if o.MemRounds <= 0 {
		o.MemRounds = 8
	}
	if o.ToggleN <= 0 {
		o.ToggleN = 200
	}
	if o.ToggleEvery <= 0 {
		o.ToggleEvery = 10 * time.Millisecond
	}
	if o.ToggleReps <= 0 {
		o.ToggleReps = 3
	}
	if o.PeriodN <= 0 {
		o.PeriodN = 400
	}
	if o.PeriodEvery <= 0 {
		o.PeriodEvery = 10 * time.Millisecond
	}
	if o.BarrierN <= 0 {
		o.BarrierN = 300
	}
	if o.Device == "" {
		o.Device = DeviceGo
	}
	if o.BoardPython == "" {
		o.BoardPython = o.Python
	}
	if o.GapN <= 0 {
		o.GapN = 300
	}
	if o.Runs <= 0 {
		o.Runs = 1
	}
	if o.OpenOCD == "" {
		o.OpenOCD = "openocd"
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Child == nil {
		o.Child = func(ctx context.Context, args ...string) *exec.Cmd {
			exe, err := os.Executable()
			if err != nil {
				exe = os.Args[0]
			}
			cmd := exec.CommandContext(ctx, exe, args...)
			cmd.Env = ChildEnviron()
			return cmd
		}
	}
}

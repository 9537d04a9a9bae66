package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
)

// ChildEnv is the environment variable that turns a hilbench binary, or a
// test binary of this package, into one measured side of a benchmark: its
// main must then call ChildMain with its arguments and exit with the code
// it returns. Each side runs in a process of its own so that its peak memory
// can be read and so that it shares nothing with the virtual board, which
// runs in the parent, just as the pexpect scripts do.
const ChildEnv = "HILBENCH_CHILD"

// prompt is the virtual board's prompt (sim.DefaultPrompt) and syncReply
// its reply to "echo sync": every side waits for it first, so that the
// banner the board printed before the port was opened is out of the way.
const (
	prompt    = sim.DefaultPrompt
	syncReply = "sync\r\n" + prompt
)

// childOutput is what a side prints as one JSON object, the hilrun sides
// and the pexpect scripts alike. Fields a mode does not produce are empty.
type childOutput struct {
	// SamplesNs are measured round trips in nanoseconds.
	SamplesNs []int64 `json:"samples_ns,omitempty"`
	// StartedNs are when each step started, from the sequence's start
	// (steps-runner, and the hilrun binary's JSON report in (v)).
	StartedNs []int64 `json:"started_ns,omitempty"`
	// SleepNs are the delays as the client measured them, in nanoseconds.
	SleepNs []int64 `json:"sleep_ns,omitempty"`
	// Done is false when a search gave up at its time limit.
	Done bool `json:"done"`
	// Seconds is how long a search took, from the send to the match.
	Seconds float64 `json:"seconds,omitempty"`
	// Bytes is how many bytes a search received after its send.
	Bytes int64 `json:"bytes,omitempty"`
	// Progress holds [seconds, bytes] pairs sampled during a search.
	Progress [][2]float64 `json:"progress,omitempty"`
	// Cursors are the stream offsets at which each `stream` reply began.
	Cursors []int64 `json:"cursors,omitempty"`
	// SentNs are when each timed line's write returned, in nanoseconds
	// from the side's own origin (every-runner, every-go, the C client's
	// every).
	SentNs []int64 `json:"sent_ns,omitempty"`
	// Hops are delayRunner's per-pair hop times (see hopSendA).
	Hops [][]int64 `json:"hops,omitempty"`
	// Values are the words a memory side read, one per measured sample.
	Values []uint64 `json:"values,omitempty"`
	// Iterations and Log describe a logged stream.
	Iterations int    `json:"iterations,omitempty"`
	Log        string `json:"log,omitempty"`
	Python     string `json:"python,omitempty"`
	Pexpect    string `json:"pexpect,omitempty"`
}

// childModes are the modes ChildMain takes.
const childModes = "rtt-runner, rtt-runner-regex, rtt-console, steps-runner, delay-runner, delay-console, every-runner, search, stream-log, mem-session, mem-runner, mem-telnet, mem-process, toggle-runner, toggle-telnet, toggle-process, barrier-runner"

// ChildMain runs one side of a benchmark against the serial port given
// with -serial, the OpenOCD telnet server given with -openocd or the JTAG
// port given with -bitbang, and prints its result as JSON on stdout. args
// are the mode (see childModes) and its flags. It returns the process exit
// code: 0, 1 when the measurement failed, 2 for bad arguments.
func ChildMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "hilbench: child mode missing (%s)\n", childModes)
		return 2
	}
	mode := args[0]
	f, err := parseChildFlags(mode, args[1:], stderr)
	if err != nil {
		return 2
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
			return 1
		}
		defer stop()
	}
	if f.rt {
		if err := runner.EnableRealtime(); err != nil {
			fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
		}
	}
	if need, have := f.required(mode); have == "" {
		fmt.Fprintf(stderr, "hilbench %s: %s is required\n", mode, need)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.limit+time.Minute)
	defer cancel()
	out, err := runChild(ctx, mode, f)
	if errors.Is(err, errUnknownMode) {
		fmt.Fprintf(stderr, "hilbench: unknown child mode %q\n", mode)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(out); err != nil {
		fmt.Fprintf(stderr, "hilbench %s: write result: %v\n", mode, err)
		return 1
	}
	return 0
}

// childFlags are the flags of every child mode; each mode reads those it
// needs.
type childFlags struct {
	port, port2, wait, how, match, logDir string
	cpuProfile                            string
	ocdAddr, bitbang, ocdBin, watch       string
	n, warmup                             int
	size, chunk                           int64
	delay, limit, dur, every              time.Duration
	rt, hops, pad                         bool
}

// parseChildFlags parses the flags of child mode; the flag package reports
// a bad one on stderr.
func parseChildFlags(mode string, args []string, stderr io.Writer) (*childFlags, error) {
	var f childFlags
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.port, "serial", "", "serial port `PATH` of the board")
	fs.StringVar(&f.port2, "serial2", "", "the board's second console, `PATH` (barrier-runner)")
	fs.IntVar(&f.n, "n", 100, "measured iterations")
	fs.IntVar(&f.warmup, "warmup", 10, "unmeasured iterations first")
	fs.DurationVar(&f.delay, "delay", time.Millisecond, "delay step length")
	fs.StringVar(&f.wait, "wait", "gosched", "how delay-console waits: gosched, yield, sleep, nanosleep, abs, abs-poll or abs-fifo")
	fs.Int64Var(&f.size, "size", 1_000_000, "bytes to stream")
	fs.StringVar(&f.how, "how", "runner", "search with the runner, the serialx console or a raw read")
	fs.StringVar(&f.match, "match", "literal", "search pattern kind: literal or regex")
	fs.DurationVar(&f.limit, "timeout", 3*time.Minute, "give up after this long")
	fs.Int64Var(&f.chunk, "chunk", 20_000_000, "bytes per stream command")
	fs.DurationVar(&f.dur, "for", 10*time.Second, "how long to keep streaming")
	fs.StringVar(&f.logDir, "logdir", "", "directory for the console log")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE`")
	fs.StringVar(&f.ocdAddr, "openocd", "", "telnet `HOST:PORT` of a running OpenOCD (mem-session, mem-runner, mem-telnet, toggle-runner, toggle-telnet)")
	fs.StringVar(&f.bitbang, "bitbang", "", "the board's JTAG port, remote_bitbang `HOST:PORT` (mem-process, toggle-process)")
	fs.StringVar(&f.ocdBin, "openocd-bin", "openocd", "OpenOCD `executable` (mem-process, toggle-process)")
	fs.BoolVar(&f.rt, "realtime", false, "run timed waits as SCHED_FIFO with locked memory, as hilrun run --realtime does (delay-runner, every-runner)")
	fs.BoolVar(&f.hops, "hops", false, "record the wall-clock time of each hop of every pair (delay-runner)")
	fs.BoolVar(&f.pad, "pad", false, "pad the typed line to the length of hilrun's request (mem-telnet)")
	fs.DurationVar(&f.every, "every", 10*time.Millisecond, "period (every-runner, toggle-runner, toggle-telnet, toggle-process)")
	fs.StringVar(&f.watch, "watch", "", "every-go: `how` the port is watched: \"\" not at all, \"poller\" registered with Go's poller and written through it, \"input\" for input only through an epoll instance of its own in the poller, as hilrun's console watches it")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return &f, nil
}

// required returns the flag that mode cannot run without, the one that
// says where the board is, and its value.
func (f *childFlags) required(mode string) (name, value string) {
	switch mode {
	case "mem-session", "mem-runner", "mem-telnet", "toggle-runner", "toggle-telnet":
		return "-openocd", f.ocdAddr
	case "mem-process", "toggle-process":
		return "-bitbang", f.bitbang
	}
	return "-serial", f.port
}

// startCPUProfile starts a CPU profile of the process into the file at
// path; stop ends it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// errUnknownMode is runChild's error for a mode it does not know.
var errUnknownMode = errors.New("unknown child mode")

// runChild runs the side of child mode with its flags f.
func runChild(ctx context.Context, mode string, f *childFlags) (childOutput, error) {
	switch mode {
	case "rtt-runner":
		return rttRunner(ctx, f.port, f.n, f.warmup, false)
	case "rtt-runner-regex":
		return rttRunner(ctx, f.port, f.n, f.warmup, true)
	case "rtt-console":
		return rttConsole(ctx, f.port, f.n, f.warmup)
	case "steps-runner":
		return stepsRunner(ctx, f.port, f.n)
	case "delay-runner":
		return delayRunner(ctx, f.port, f.delay, f.n, f.warmup, f.hops)
	case "every-go":
		return everyGo(ctx, f.port, f.every, f.n, f.watch)
	case "every-runner":
		return everyRunner(ctx, f.port, f.every, f.n)
	case "barrier-runner":
		return barrierRunner(ctx, f.port, f.port2, f.n)
	case "delay-console":
		return delayConsole(ctx, f.port, f.wait, f.delay, f.n, f.warmup)
	case "search":
		return search(ctx, f.port, f.how, f.match, f.size, f.limit, f.logDir)
	case "stream-log":
		return streamLog(ctx, f.port, f.chunk, f.dur, f.logDir)
	case "mem-session":
		return memSession(ctx, f.ocdAddr, f.n, f.warmup)
	case "mem-runner":
		return memRunner(ctx, f.ocdAddr, f.n, f.warmup)
	case "mem-telnet":
		return memTelnet(ctx, f.ocdAddr, f.n, f.warmup, f.pad)
	case "mem-process":
		return memProcess(ctx, f.ocdBin, f.bitbang, f.n, f.warmup)
	case "toggle-runner":
		return toggleRunner(ctx, f.ocdAddr, f.n, f.every)
	case "toggle-telnet":
		return toggleTelnet(ctx, f.ocdAddr, f.n, f.every)
	case "toggle-process":
		return toggleProcess(ctx, f.ocdBin, f.bitbang, f.n, f.every)
	}
	return childOutput{}, errUnknownMode
}

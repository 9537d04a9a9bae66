package bench

import (
	"context"
	"encoding/json"
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
const childModes = "rtt-runner, rtt-runner-regex, rtt-console, delay-runner, delay-console, every-runner, search, stream-log, mem-session, mem-runner, mem-telnet, mem-process, toggle-runner, toggle-telnet, toggle-process"

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
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.String("serial", "", "serial port `PATH` of the board")
	n := fs.Int("n", 100, "measured iterations")
	warmup := fs.Int("warmup", 10, "unmeasured iterations first")
	delay := fs.Duration("delay", time.Millisecond, "delay step length")
	wait := fs.String("wait", "gosched", "how delay-console waits: gosched, yield, sleep, nanosleep, abs, abs-poll or abs-fifo")
	size := fs.Int64("size", 1_000_000, "bytes to stream")
	how := fs.String("how", "runner", "search with the runner, the serialx console or a raw read")
	match := fs.String("match", "literal", "search pattern kind: literal or regex")
	limit := fs.Duration("timeout", 3*time.Minute, "give up after this long")
	chunk := fs.Int64("chunk", 20_000_000, "bytes per stream command")
	dur := fs.Duration("for", 10*time.Second, "how long to keep streaming")
	logDir := fs.String("logdir", "", "directory for the console log")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to `FILE`")
	ocdAddr := fs.String("openocd", "", "telnet `HOST:PORT` of a running OpenOCD (mem-session, mem-runner, mem-telnet, toggle-runner, toggle-telnet)")
	bitbang := fs.String("bitbang", "", "the board's JTAG port, remote_bitbang `HOST:PORT` (mem-process, toggle-process)")
	ocdBin := fs.String("openocd-bin", "openocd", "OpenOCD `executable` (mem-process, toggle-process)")
	rt := fs.Bool("realtime", false, "run timed waits as SCHED_FIFO with locked memory, as hilrun run --realtime does (delay-runner, every-runner)")
	hops := fs.Bool("hops", false, "record the wall-clock time of each hop of every pair (delay-runner)")
	pad := fs.Bool("pad", false, "pad the typed line to the length of hilrun's request (mem-telnet)")
	every := fs.Duration("every", 10*time.Millisecond, "period (every-runner, toggle-runner, toggle-telnet, toggle-process)")
	watch := fs.String("watch", "", "every-go: `how` the port is watched: \"\" not at all, \"poller\" registered with Go's poller and written through it, \"input\" for input only through an epoll instance of its own in the poller, as hilrun's console watches it")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *rt {
		if err := runner.EnableRealtime(); err != nil {
			fmt.Fprintf(stderr, "hilbench %s: %v\n", mode, err)
		}
	}
	need, have := "-serial", *port
	switch mode {
	case "mem-session", "mem-runner", "mem-telnet", "toggle-runner", "toggle-telnet":
		need, have = "-openocd", *ocdAddr
	case "mem-process", "toggle-process":
		need, have = "-bitbang", *bitbang
	}
	if have == "" {
		fmt.Fprintf(stderr, "hilbench %s: %s is required\n", mode, need)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *limit+time.Minute)
	defer cancel()
	var out childOutput
	var err error
	switch mode {
	case "rtt-runner":
		out, err = rttRunner(ctx, *port, *n, *warmup, false)
	case "rtt-runner-regex":
		out, err = rttRunner(ctx, *port, *n, *warmup, true)
	case "rtt-console":
		out, err = rttConsole(ctx, *port, *n, *warmup)
	case "delay-runner":
		out, err = delayRunner(ctx, *port, *delay, *n, *warmup, *hops)
	case "every-go":
		out, err = everyGo(ctx, *port, *every, *n, *watch)
	case "every-runner":
		out, err = everyRunner(ctx, *port, *every, *n)
	case "delay-console":
		out, err = delayConsole(ctx, *port, *wait, *delay, *n, *warmup)
	case "search":
		out, err = search(ctx, *port, *how, *match, *size, *limit, *logDir)
	case "stream-log":
		out, err = streamLog(ctx, *port, *chunk, *dur, *logDir)
	case "mem-session":
		out, err = memSession(ctx, *ocdAddr, *n, *warmup)
	case "mem-runner":
		out, err = memRunner(ctx, *ocdAddr, *n, *warmup)
	case "mem-telnet":
		out, err = memTelnet(ctx, *ocdAddr, *n, *warmup, *pad)
	case "mem-process":
		out, err = memProcess(ctx, *ocdBin, *bitbang, *n, *warmup)
	case "toggle-runner":
		out, err = toggleRunner(ctx, *ocdAddr, *n, *every)
	case "toggle-telnet":
		out, err = toggleTelnet(ctx, *ocdAddr, *n, *every)
	case "toggle-process":
		out, err = toggleProcess(ctx, *ocdBin, *bitbang, *n, *every)
	default:
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

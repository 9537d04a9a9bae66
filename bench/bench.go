// Package bench measures hilrun on its virtual board, side by side with
// Python's pexpect on the same kind of device:
//
//   - (a) send/expect round trips,
//   - (b) finding a pattern at the end of a long stream, speed and peak
//     memory,
//   - (c) the accuracy of delays between sends, as the device sees it,
//   - (d) a full-speed stream logged with no byte lost,
//   - (l) a line sent on a fixed period (repeat every:), as the device
//     sees it,
//
// with two more peers in (a), (c) and (l): Tcl expect (bench/expect_*.tcl)
// and a minimal C client (bench/cfloor/floor.c: write, poll, read, and
// absolute clock_nanosleep), compiled with the system's cc, which is the
// floor any client pays on the machine;
//
// and its memory access through the real OpenOCD driving the board's JTAG
// port, side by side with running OpenOCD once per operation:
//
//   - (e) the latency of one 32-bit read,
//   - (f) the LED toggled on a fixed period, as the board saw it.
//
// The virtual board runs in the calling process. Every measured side, the
// hilrun ones included, runs in a child process of its own (see ChildEnv
// and the embedded pexpect_*.py scripts) that opens the board's pty like any
// serial port, or reaches its memory through OpenOCD, so both sides pay the
// same process and pty costs and each one's peak memory can be read from
// the kernel. Blocks of the sides are alternated so that noise on a shared
// machine hits them all.
//
// cmd/hilbench runs it and prints a Markdown report.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

//go:embed pexpect_*.py expect_*.tcl cfloor/floor.c
var scripts embed.FS

// Scenario names, as -only takes them.
const (
	RoundTrip = "a"
	Search    = "b"
	Delay     = "c"
	Lossless  = "d"
	MemRead   = "e"
	MemToggle = "f"
	Period    = "l"
)

// Scenarios lists every scenario, in the order Run runs them.
var Scenarios = []string{RoundTrip, Search, Delay, Lossless, MemRead, MemToggle, Period}

// Side names.
const (
	sideRunner = "hilrun run"
	// sideRunnerRegex is (a)'s runner expecting a regexp a delimiter ends.
	sideRunnerRegex = "hilrun run, regex"
	sideConsole     = "hilrun serialx"
	// sideRunnerRT is the runner as hilrun run --realtime runs it.
	sideRunnerRT = "hilrun run --realtime"
	sidePexpect  = "pexpect"
	// sideExpect is Tcl expect (bench/expect_*.tcl), sideFloor the C
	// client (bench/floor.c): write, poll, read and absolute sleeps, the
	// least any client pays on the machine.
	sideExpect = "Tcl expect"
	sideFloor  = "C client (floor)"
	// sideGoLoop is (l)'s diagnostic Go loop of the C client's system
	// calls (see everyGo).
	sideGoLoop = "Go loop (diagnostic)"
	// sideGoLoopPoller is that loop with the port in Go's poller, and
	// sideGoLoopInput with the port watched for input only, as hilrun's
	// console watches it.
	sideGoLoopPoller = "Go loop, port in Go's poller (diagnostic)"
	sideGoLoopInput  = "Go loop, port watched for input only (diagnostic)"
	// sideBaseline is hilrun run in a hilbench built from another commit
	// (Options.Baseline).
	sideBaseline = "hilrun run, baseline build"
	// sideFloorAgain is a second C client in the same rounds (Options.AA):
	// its verdict against the first is what noise alone makes of a verdict.
	sideFloorAgain = "C client again (A/A)"
)

// Report is the outcome of a run. Scenarios not run are nil.
type Report struct {
	Env      Env           `json:"env"`
	Command  string        `json:"command,omitempty"`
	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	RTT      *RTTReport    `json:"rtt,omitempty"`
	Search   *SearchReport `json:"search,omitempty"`
	Delay    *DelayReport  `json:"delay,omitempty"`
	Stream   *StreamReport `json:"stream,omitempty"`
	Mem      *MemReport    `json:"mem,omitempty"`
	Toggle   *ToggleReport `json:"toggle,omitempty"`
	Period   *PeriodReport `json:"period,omitempty"`
}

// Series is one side's samples of a latency scenario.
type Series struct {
	Side    string          `json:"side"`
	Command string          `json:"command"`
	Summary Summary         `json:"summary"`
	Samples []time.Duration `json:"-"`
	// Rounds summarizes each alternating block, in order, for the
	// per-round ratios.
	Rounds []Summary `json:"rounds,omitempty"`
	// MaxRSSKiB is the peak resident memory of each block's process.
	MaxRSSKiB []int64 `json:"max_rss_kib"`
}

// StreamReport is scenario (d).
type StreamReport struct {
	Command    string  `json:"command"`
	Chunk      int64   `json:"chunk"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	// Sent is the number of bytes the board sent in reply to the stream
	// commands; Logged the size of the log from the first reply on.
	Sent   int64 `json:"sent"`
	Logged int64 `json:"logged"`
	// Lost counts bytes sent but missing from the log; Identical reports
	// that the log holds exactly what was sent.
	Lost      int64  `json:"lost"`
	Identical bool   `json:"identical"`
	Timeline  string `json:"timeline"`
	Problem   string `json:"problem,omitempty"`
	MaxRSSKiB int64  `json:"max_rss_kib"`
}

// MBps is the logged stream's speed in MB (10^6 bytes) per second.
func (s *StreamReport) MBps() float64 { return ratio(float64(s.Sent)/1e6, s.Seconds) }

// Run runs the scenarios of opts, one after the other, and returns their
// report. It fails on the first side that cannot be measured.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	// The board runs in this process. A thread coming back from a system
	// call (the board's reader, woken by a line) needs an idle P before it
	// runs Go code again: with as many Ps as CPUs, a busy P or two (the
	// GC, the copying of a side's output) can keep it waiting for the
	// scheduler. Spare Ps keep the instrument from adding to the tail; the
	// measured sides run with their defaults.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(8, runtime.NumCPU())))
	rep := &Report{Started: time.Now(), Command: opts.Command}
	if opts.WorkDir == "" {
		dir, err := os.MkdirTemp("", "hilbench-")
		if err != nil {
			return nil, fmt.Errorf("create a work directory: %w", err)
		}
		defer os.RemoveAll(dir)
		opts.WorkDir = dir
	}
	if err := writeScripts(opts.WorkDir); err != nil {
		return nil, err
	}
	b := &bencher{opts: opts, rep: rep}
	if opts.CC != "" {
		b.floor = filepath.Join(opts.WorkDir, "floor")
		out, err := exec.CommandContext(ctx, opts.CC, "-O2", "-o", b.floor, filepath.Join(opts.WorkDir, "floor.c")).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("compile the C client with %s: %w: %s", opts.CC, err, lastLines(string(out), 5))
		}
	}
	rep.Env = b.env(ctx)
	only := func(s string) bool { return len(opts.Only) == 0 || slices.Contains(opts.Only, s) }
	var err error
	if only(MemRead) || only(MemToggle) {
		if _, lerr := exec.LookPath(opts.OpenOCD); lerr != nil {
			err = fmt.Errorf("scenarios e and f need OpenOCD (apt-get install openocd; -only a,b,c,d leaves them out): %w", lerr)
		}
	}
	if only(RoundTrip) && err == nil {
		rep.RTT, err = b.rtt(ctx)
	}
	if only(Search) && err == nil {
		rep.Search, err = b.search(ctx)
	}
	if only(Delay) && err == nil {
		rep.Delay, err = b.delay(ctx)
	}
	if only(Lossless) && err == nil {
		rep.Stream, err = b.lossless(ctx)
	}
	if only(MemRead) && err == nil {
		rep.Mem, err = b.memLatency(ctx)
	}
	if only(MemToggle) && err == nil {
		rep.Toggle, err = b.memToggle(ctx)
	}
	if only(Period) && err == nil {
		rep.Period, err = b.periods(ctx)
	}
	rep.Env.LoadAfter = loadAvg()
	rep.Finished = time.Now()
	return rep, err
}

// writeScripts writes the embedded scripts and the C client's source into
// dir, each under its base name.
func writeScripts(dir string) error {
	return fs.WalkDir(scripts, ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, _ := scripts.ReadFile(name)
		if err := os.WriteFile(filepath.Join(dir, path.Base(name)), data, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path.Base(name), err)
		}
		return nil
	})
}

type bencher struct {
	opts Options
	rep  *Report
	// floor is the compiled C client, "" without a C compiler.
	floor string
}

func (b *bencher) progress(format string, args ...any) {
	fmt.Fprintf(b.opts.Progress, format+"\n", args...)
}

// lossless runs scenario (d): a logged stream at full speed for
// StreamFor, then a byte-for-byte check of the log.
func (b *bencher) lossless(ctx context.Context) (*StreamReport, error) {
	o := b.opts
	dir := filepath.Join(o.WorkDir, "lossless-logs")
	rep := &StreamReport{
		Chunk:   o.StreamChunk,
		Command: fmt.Sprintf("HILBENCH_CHILD=1 hilbench stream-log -serial PATH -chunk %d -for %s -logdir DIR", o.StreamChunk, o.StreamFor),
	}
	err := b.withBoard(func(board *sim.Board) error {
		args := []string{"stream-log", "-serial", board.SerialPath(), "-chunk", strconv.FormatInt(o.StreamChunk, 10),
			"-for", o.StreamFor.String(), "-logdir", dir, "-timeout", (o.StreamFor + 2*time.Minute).String()}
		out, rss, err := b.side(ctx, false, args, o.StreamFor+5*time.Minute)
		if err != nil {
			return err
		}
		rep.Iterations, rep.Seconds, rep.MaxRSSKiB = out.Iterations, out.Seconds, rss
		return verifyLog(rep, out.Log, out.Cursors)
	})
	os.RemoveAll(dir) // gigabytes
	if err != nil {
		return rep, fmt.Errorf("lossless stream: %w", err)
	}
	state := "byte-identical"
	if !rep.Identical {
		state = "NOT identical: " + rep.Problem
	}
	b.progress("d: %d x %d bytes in %.1f s (%.1f MB/s), %d lost, log %s, timeline %s", rep.Iterations, rep.Chunk, rep.Seconds, rep.MBps(), rep.Lost, state, rep.Timeline)
	return rep, nil
}

// verifyLog checks the raw log at path against what the board sent: from
// cursors[0] on, each reply (StreamData(chunk) and then the line ending and
// prompt) back to back, each starting at its cursor, and nothing after the
// last. It also checks that the timeline's received chunks tile the log.
func verifyLog(rep *StreamReport, path string, cursors []int64) error {
	if path == "" || len(cursors) == 0 {
		return errors.New("the stream run reported no log or no replies")
	}
	block := append(sim.StreamData(int(rep.Chunk), "crlf"), "\r\n"+prompt...)
	rep.Sent = int64(len(cursors)) * int64(len(block))
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	rep.Logged = fi.Size() - cursors[0]
	rep.Lost = max(0, rep.Sent-rep.Logged)
	rep.Identical = true
	fail := func(format string, args ...any) {
		if rep.Identical {
			rep.Problem = fmt.Sprintf(format, args...)
		}
		rep.Identical = false
	}
	got := make([]byte, len(block))
	for i, c := range cursors {
		if want := cursors[0] + int64(i)*int64(len(block)); c != want {
			fail("reply %d began at offset %d, want %d", i, c, want)
			break
		}
		n, err := f.ReadAt(got, c)
		if n < len(got) {
			fail("reply %d: log ends %d bytes into it (%v)", i, n, err)
			break
		}
		if !bytes.Equal(got, block) {
			j := 0
			for j < len(got) && got[j] == block[j] {
				j++
			}
			fail("reply %d differs at byte %d (log offset %d)", i, j, c+int64(j))
			break
		}
	}
	if end := cursors[len(cursors)-1] + int64(len(block)); fi.Size() != end && rep.Identical {
		fail("the log has %d bytes, want %d", fi.Size(), end)
	}
	rep.Timeline = checkTimeline(strings.TrimSuffix(path, ".log")+".timeline.jsonl", fi.Size())
	return nil
}

// checkTimeline reads a console timeline and checks that its "rx" entries
// are contiguous from offset 0 and add up to size. It returns "ok" or what
// is wrong.
func checkTimeline(path string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var next int64
	entries := 0
	for sc.Scan() {
		var e struct {
			Dir string `json:"dir"`
			Off int64  `json:"off"`
			N   int64  `json:"n"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Sprintf("line %d: %v", entries+1, err)
		}
		if e.Dir != "rx" {
			continue
		}
		if e.Off != next {
			return fmt.Sprintf("rx entry at offset %d, want %d", e.Off, next)
		}
		next += e.N
		entries++
	}
	if err := sc.Err(); err != nil {
		return err.Error()
	}
	if next != size {
		return fmt.Sprintf("rx entries add up to %d bytes, the log has %d", next, size)
	}
	return fmt.Sprintf("ok (%d rx entries)", entries)
}

// us formats d in microseconds.
func us(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + " µs"
}

// mib formats a KiB count in MiB.
func mib(kib int64) string {
	return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64) + " MiB"
}

// The child sides of scenario (c): pairs of sends with a delay between
// them, by the runner (with its hops recorded on request) and through a
// serialx console waiting in each of the diagnostic ways.

package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// delayRunner runs warmup+n pairs of sends with a delay step between them,
// as a user writes a timed sequence. The board timestamps the lines; the
// runner's own account of each delay (actual_us) is returned for
// reference.
//
// With hops it also records, per pair, the wall-clock time of each hop the
// line "echo bI" goes through (see Hop), which the parent lines up with
// the board's receipt of both lines.
func delayRunner(ctx context.Context, port string, delay time.Duration, n, warmup int, hops bool) (childOutput, error) {
	src := fmt.Sprintf(`name: delay
expect_timeout: 10s
steps:
%s  - repeat: {count: %d, as: i}
    steps:
      - send: echo a${i}
      - delay: %s
      - send: echo b${i}
      - expect: %s
`, syncSteps, warmup+n, delay, quoteYAML("b${i}\r\n"+prompt))
	var watch runner.Sink
	var rec hopRecorder
	if hops {
		watch = &rec
	}
	res, err := runWatched(ctx, src, map[string]string{steps.DefaultDevice: port}, nil, "", watch)
	if err != nil {
		return childOutput{}, err
	}
	delays := stepsOf(res, steps.KindDelay)
	if len(delays) != warmup+n {
		return childOutput{}, fmt.Errorf("ran %d delay steps, want %d", len(delays), warmup+n)
	}
	var out childOutput
	for _, s := range delays[warmup:] {
		us, _ := s.Data["actual_us"].(int64)
		out.SleepNs = append(out.SleepNs, us*1000)
	}
	if hops {
		if len(rec.hops) != warmup+n {
			return childOutput{}, fmt.Errorf("recorded %d pairs' hops, want %d", len(rec.hops), warmup+n)
		}
		out.Hops = rec.hops[warmup:]
	}
	return out, nil
}

// Hop indexes the wall-clock times (Unix nanoseconds) delayRunner records
// for each pair, and the GC cycles counted at the two sends.
const (
	hopSendA      = iota // ConsoleInput of "echo aI": just before its write
	hopDelayStart        // the send of a finished (its StepFinished): the delay counts from its write, just before
	hopWake              // the delay's wait returned (hopDelayStart + actual_us)
	hopDelayEnd          // the delay step's StepFinished event
	hopSendB             // ConsoleInput of "echo bI": just before its write
	hopGCA               // GC cycles completed at hopSendA
	hopGCB               // GC cycles completed at hopSendB
	hopCount
)

// hopRecorder is the runner.Sink of delayRunner -hops.
type hopRecorder struct {
	cur  []int64
	hops [][]int64
	gc   []metrics.Sample
}

func (h *hopRecorder) gcCycles() int64 {
	if h.gc == nil {
		h.gc = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	}
	metrics.Read(h.gc)
	if h.gc[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(h.gc[0].Value.Uint64())
}

// Event records the hops of each pair; events outside the pairs (the sync
// step, the expect steps) are ignored.
func (h *hopRecorder) Event(e runner.Event) {
	switch {
	case e.Type == runner.ConsoleInput && bytes.HasPrefix(e.Data, []byte("echo a")):
		h.cur = make([]int64, hopCount)
		h.cur[hopSendA], h.cur[hopGCA] = e.Time.UnixNano(), h.gcCycles()
	case e.Type == runner.StepFinished && h.cur != nil && e.Step != nil && e.Step.Kind == string(steps.KindSend) && h.cur[hopDelayStart] == 0:
		h.cur[hopDelayStart] = e.Time.UnixNano()
	case e.Type == runner.StepFinished && h.cur != nil && e.Step != nil && e.Step.Kind == string(steps.KindDelay):
		us, _ := e.Step.Data["actual_us"].(int64)
		h.cur[hopWake] = h.cur[hopDelayStart] + us*1000
		h.cur[hopDelayEnd] = e.Time.UnixNano()
	case e.Type == runner.ConsoleInput && h.cur != nil && bytes.HasPrefix(e.Data, []byte("echo b")):
		h.cur[hopSendB], h.cur[hopGCB] = e.Time.UnixNano(), h.gcCycles()
		h.hops = append(h.hops, h.cur)
		h.cur = nil
	}
}

// spinWindow is how long before a deadline the "gosched" and "yield" waits
// of delayConsole stop sleeping on a timer and start polling the clock (the
// runner's wait before it moved to nanosleep).
const spinWindow = time.Millisecond

// absPollWindow is how long before a deadline the "abs-poll" wait stops
// sleeping and polls the clock without yielding (the runner's wakeEarly).
const absPollWindow = 80 * time.Microsecond

// preciseWindow is how long before a deadline the "nanosleep" wait of
// delayConsole stops sleeping and starts polling.
const preciseWindow = 200 * time.Microsecond

// delayConsole is a diagnostic for scenario (c): the same pairs as
// delayRunner, through a serialx console, waiting in one of four ways so
// that the cost of the waiting method can be told from the engine's:
// "gosched" as the runner used to (a timer, then polling the clock for the
// last millisecond with runtime.Gosched between polls), "yield" the same
// with a system-wide yield (sched_yield) between polls, "sleep" with
// time.Sleep alone, "nanosleep" as the runner now does (nanosleep on a
// thread with 1 ns timer slack, then polling with sched_yield for the last
// 200 µs; the runner first sleeps on a Go timer until 2 ms before).
func delayConsole(ctx context.Context, port, wait string, delay time.Duration, n, warmup int) (childOutput, error) {
	var poll func()
	switch wait {
	case "gosched":
		poll = runtime.Gosched
	case "yield":
		poll = yieldThread
	case "sleep", "nanosleep", "abs", "abs-fifo", "abs-poll":
	default:
		return childOutput{}, fmt.Errorf("unknown -wait %q (want gosched, yield, sleep, nanosleep, abs, abs-poll or abs-fifo)", wait)
	}
	c, err := openSynced(ctx, port, "")
	if err != nil {
		return childOutput{}, err
	}
	defer c.Close()
	var out childOutput
	for i := range warmup + n {
		is := strconv.Itoa(i)
		if _, err := c.Write(ctx, []byte("echo a"+is+"\n")); err != nil {
			return childOutput{}, err
		}
		start := time.Now()
		deadline := start.Add(delay)
		switch {
		case wait == "sleep":
			time.Sleep(delay)
		case wait == "nanosleep":
			sleepPrecise(deadline, preciseWindow)
		case wait == "abs", wait == "abs-fifo":
			sleepAbs(deadline, wait == "abs-fifo", 0)
		case wait == "abs-poll":
			sleepAbs(deadline, false, absPollWindow)
		default:
			if d := time.Until(deadline) - spinWindow; d > 0 {
				time.Sleep(d)
			}
			for time.Now().Before(deadline) {
				poll()
			}
		}
		slept := time.Since(start)
		cur, err := c.Write(ctx, []byte("echo b"+is+"\n"))
		if err != nil {
			return childOutput{}, err
		}
		if _, err := c.Expect(ctx, cur, []stream.Pattern{stream.Literal("b" + is + "\r\n" + prompt)}, nil); err != nil {
			return childOutput{}, err
		}
		if i >= warmup {
			out.SleepNs = append(out.SleepNs, slept.Nanoseconds())
		}
	}
	return out, nil
}

// Command pollbench measures mem_poll's latency through the GDB backend:
// the time from hilrun's QEMU firmware (firmware/qemu) setting a flag to
// the mem_poll step that waits for it passing, on a guest that runs (each
// poll halts the guest, reads and resumes it).
//
// The method. Guest time cannot be aligned with the host's here: QEMU's
// virtual clock stops while a poll holds the guest halted, so the guest's
// millisecond counter (and flag_at) drifts from the host's clock by the
// time spent halted. The flag's setting is bracketed on the host instead:
//
//  1. the shell clears the flag (flag 0) and the step starts: runner.Run
//     with one mem_poll step (until: value == K), through the engine's GDB
//     backend on one persistent session, as hilrun run opens it;
//  2. after the step's first read and a random wait (uniform over one
//     poll interval, so that the set falls at every phase of the polling),
//     the host writes "flag K\r" to the console at host time send;
//  3. the firmware sets the flag when it runs the line, then answers
//     "flag: K"; the host notes when that answer's last byte arrived
//     (reply, from the console's receive timestamps);
//  4. the step passes at pass, the time of its step_finished event.
//
// The flag was set between send and reply, so the latency lies between
// pass-reply (low) and pass-send (high); the bracket's width is the
// console round trip, reported too. Both bounds are reported, and their
// mean as the estimate; its error is at most half the bracket.
//
// Run it (it needs qemu-system-arm and the firmware built):
//
//	make -C firmware/qemu
//	go run ./bench/cmd/pollbench -n 200
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/bench"
	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

const prompt = "qemu> "

func main() {
	elf := flag.String("elf", "firmware/qemu/build/qemu.elf", "the firmware (make -C firmware/qemu builds it)")
	n := flag.Int("n", 200, "measurements per poll interval")
	intervals := flag.String("intervals", "1ms,5ms,20ms", "the mem_poll intervals measured, comma-separated")
	flag.Parse()
	var ivs []time.Duration
	for _, s := range strings.Split(*intervals, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < time.Millisecond {
			fmt.Fprintf(os.Stderr, "pollbench: -intervals: %q is not a duration of 1ms or more\n", s)
			os.Exit(2)
		}
		ivs = append(ivs, d)
	}
	abs, err := filepath.Abs(*elf)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pollbench: -elf: %v (make -C firmware/qemu builds it)\n", err)
		os.Exit(2)
	}
	if err := run(abs, *n, ivs); err != nil {
		fmt.Fprintln(os.Stderr, "pollbench:", err)
		os.Exit(3)
	}
}

// arrivals maps console offsets to the time their bytes arrived.
type arrivals struct {
	mu     sync.Mutex
	chunks []chunk
}

type chunk struct {
	end int64 // offset just past the chunk
	at  time.Time
}

func (a *arrivals) add(at time.Time, off int64, p []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.chunks = append(a.chunks, chunk{end: off + int64(len(p)), at: at})
	if len(a.chunks) > 4096 {
		a.chunks = append(a.chunks[:0], a.chunks[2048:]...)
	}
}

// at is when the byte just before offset end arrived.
func (a *arrivals) at(end int64) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.chunks {
		if c.end >= end {
			return c.at, true
		}
	}
	return time.Time{}, false
}

// timed is the session as the runner sees it: it notes each read's
// duration and the first read of a step, and is not closed by the runner
// (one session serves every step, as in hilrun run).
type timed struct {
	runner.Debugger
	mu    sync.Mutex
	reads []time.Duration
	first chan struct{}
}

func (t *timed) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	start := time.Now()
	v, err := t.Debugger.ReadMemory(ctx, addr, width, count)
	d := time.Since(start)
	t.mu.Lock()
	t.reads = append(t.reads, d)
	if t.first != nil {
		close(t.first)
		t.first = nil
	}
	t.mu.Unlock()
	return v, err
}

func (t *timed) Close() error            { return nil }
func (t *timed) Unwrap() runner.Debugger { return t.Debugger }

func run(elf string, n int, intervals []time.Duration) error {
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	in, err := qemu.Start(sctx, qemu.Spec{Machine: "mps2-an385", Kernel: elf, Procs: bench.Gates.Procs})
	if err != nil {
		return err
	}
	defer in.Close(ctx)
	con, err := serialx.Open(sctx, "qemu", serialx.Config{Path: in.ConsolePath(), NoLock: true, Devices: bench.Gates.Devices})
	if err != nil {
		return err
	}
	defer con.Close()
	arr := &arrivals{}
	defer con.OnReceive(arr.add)()
	if err := sync0(sctx, con); err != nil {
		return err
	}
	d, err := engine.OpenProbe(engine.ProbeOptions{Gates: bench.Gates})(sctx, &steps.Probe{Name: "fw", GDB: in.GDBAddr()})
	if err != nil {
		return err
	}
	defer d.Close()
	dbg := &timed{Debugger: d}

	fmt.Printf("mem_poll latency through the GDB backend, QEMU %s, firmware %s, %d measurements per interval\n\n", "mps2-an385", elf, n)
	fmt.Println("| interval | latency low (pass-reply) median / p99 | latency high (pass-send) median / p99 | estimate median / p99 | bracket (console round trip) median / p99 | one poll (halt, read, resume) median / p99 | polls per step median |")
	fmt.Println("|---|---|---|---|---|---|---|")
	k := uint64(1000)
	for _, iv := range intervals {
		var lows, highs, mids, brackets []time.Duration
		var polls []time.Duration
		dbg.mu.Lock()
		dbg.reads = nil
		dbg.mu.Unlock()
		for i := 0; i < n; i++ {
			k++
			m, err := measure(ctx, con, arr, dbg, elf, iv, k)
			if err != nil {
				return fmt.Errorf("interval %s, measurement %d: %w", iv, i+1, err)
			}
			lows = append(lows, m.pass.Sub(m.reply))
			highs = append(highs, m.pass.Sub(m.send))
			mids = append(mids, m.pass.Sub(m.send.Add(m.reply.Sub(m.send)/2)))
			brackets = append(brackets, m.reply.Sub(m.send))
			polls = append(polls, time.Duration(m.polls))
		}
		dbg.mu.Lock()
		reads := bench.Summarize(dbg.reads)
		dbg.mu.Unlock()
		lo, hi, mid, br, pl := bench.Summarize(lows), bench.Summarize(highs), bench.Summarize(mids), bench.Summarize(brackets), bench.Summarize(polls)
		fmt.Printf("| %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %d |\n", iv,
			ms(lo.Median), ms(lo.P99), ms(hi.Median), ms(hi.P99), ms(mid.Median), ms(mid.P99),
			ms(br.Median), ms(br.P99), ms(reads.Median), ms(reads.P99), int64(pl.Median))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

type measurement struct {
	send, reply, pass time.Time
	polls             int
}

// measure has the firmware set the flag to k while a mem_poll step with
// interval iv waits for it; see the package comment.
func measure(ctx context.Context, con *serialx.Console, arr *arrivals, dbg *timed, elf string, iv time.Duration, k uint64) (measurement, error) {
	var m measurement
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := command(ctx, con, "flag 0", "flag: 0\r\n"); err != nil {
		return m, err
	}
	src := fmt.Sprintf("name: poll\nprobes:\n  fw: {elf: %q}\nsteps:\n  - {mem_poll: true, symbol: flag, until: value == %d, interval: %s, timeout: 10s}\n", elf, k, iv)
	seq, err := steps.Parse("pollbench.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		return m, err
	}
	first := make(chan struct{})
	dbg.mu.Lock()
	dbg.first = first
	dbg.mu.Unlock()
	var passAt time.Time
	var res *runner.SequenceResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The engine's bench, with the probe the benchmark times.
		bench := engine.NewBench(engine.BenchConfig{Gates: bench.Gates}).WithOpenProbe(func(runner.ProbeOpener) runner.ProbeOpener {
			return func(context.Context, *steps.Probe) (runner.Debugger, error) { return dbg, nil }
		})
		sink := runner.SinkFunc(func(e runner.Event) {
			if e.Type == runner.StepFinished {
				passAt = e.Time
			}
		})
		pl, err := plan.Bind(seq, plan.Sources{})
		if err != nil {
			res = &runner.SequenceResult{Status: runner.Errored, Error: err.Error()}
			return
		}
		res = pl.Run(ctx, bench, plan.Output{Sink: sink, KeepSteps: true})
	}()
	select {
	case <-first:
	case <-done:
		return m, fmt.Errorf("the step ended before it polled: %s", res.Error)
	}
	time.Sleep(rand.N(iv))
	cmd := fmt.Sprintf("flag %d", k)
	m.send = time.Now()
	reply, err := command(ctx, con, cmd, fmt.Sprintf("flag: %d\r\n", k))
	if err != nil {
		return m, err
	}
	at, ok := arr.at(reply.End)
	if !ok {
		return m, errors.New("no arrival time for the reply")
	}
	m.reply = at
	<-done
	if res.Status != runner.Passed || len(res.Steps) != 1 {
		return m, fmt.Errorf("the step did not pass: %s %s", res.Status, res.Error)
	}
	m.pass = passAt
	if p, ok := res.Steps[0].Data["polls"].(int); ok {
		m.polls = p
	}
	if m.reply.Before(m.send) {
		return m, errors.New("the reply arrived before the command was sent")
	}
	return m, nil
}

// command writes line and a carriage return and waits for want.
func command(ctx context.Context, con *serialx.Console, line, want string) (stream.Match, error) {
	cur, err := con.Write(ctx, []byte(line+"\r"))
	if err != nil {
		return stream.Match{}, err
	}
	p, err := stream.Regexp(regexp.QuoteMeta(want))
	if err != nil {
		return stream.Match{}, err
	}
	return con.Expect(ctx, cur, []stream.Pattern{p}, nil)
}

// sync0 waits for the shell's prompt after an empty line, then for a
// marker echoed after it, so nothing older is still to come.
func sync0(ctx context.Context, con *serialx.Console) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := command(wctx, con, "", prompt)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no prompt from the firmware: %w", err)
		}
	}
	_, err := command(ctx, con, "echo pollbench-sync", "pollbench-sync\r\n"+prompt)
	return err
}

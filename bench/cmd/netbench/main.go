// Command netbench measures what a network console costs against a local
// one: the virtual board's pty opened directly, and through Debian's
// ser2net in front of that pty, raw (tcp://) and with RFC 2217
// (rfc2217://), all in the same run.
//
// The method. Each target gets its own virtual board and console, opened
// as hilrun opens a device (serialx.Open, with logs).
//
//  1. Round trip: send "version" and wait for the version line and the
//     prompt after it; the time from just before the write to the match.
//     The targets take turns in rounds of -batch round trips, so that
//     load from the other agents on the machine falls on all of them
//     alike.
//  2. Stream: the board prints -chunk bytes of test data at full speed
//     ("stream N"), again and again for -stream per target, the targets
//     taking turns chunk by chunk. Every chunk is compared byte for byte
//     with what the board sent, and at the end the raw log must hold
//     exactly as many bytes as were received, every chunk in it: zero
//     bytes lost, or the run fails.
//
// The added latency of a network target is its median (and p99) minus the
// pty's; the ratio is network over pty.
//
//	go run ./bench/cmd/netbench -n 1000 -stream 10s
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hilrun/hilrun/bench"
	"github.com/hilrun/hilrun/internal/ser2net"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/stream"
)

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1000, "round trips per target")
	flag.IntVar(&o.batch, "batch", 50, "round trips per target per turn")
	flag.DurationVar(&o.streamFor, "stream", 10*time.Second, "how long each target streams")
	flag.IntVar(&o.chunk, "chunk", 4<<20, "bytes per stream command")
	chardelay := flag.Bool("chardelay", true, "leave ser2net's chardelay on (its default: it waits up to 2 characters, at least 1 ms, to gather bytes from the device before sending them on); false measures hilrun's own cost")
	flag.Parse()
	if o.n < 1 || o.batch < 1 || o.chunk < 1 || o.streamFor <= 0 {
		fmt.Fprintln(os.Stderr, "netbench: -n, -batch, -chunk and -stream must be positive")
		os.Exit(2)
	}
	if !*chardelay {
		o.ser2net = append(o.ser2net, "chardelay: false")
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "netbench:", err)
		os.Exit(3)
	}
}

// options are netbench's flags.
type options struct {
	// n round trips per target, in turns of batch.
	n, batch int
	// chunk bytes per stream command, for streamFor per target.
	chunk     int
	streamFor time.Duration
	// ser2net are more options of ser2net's connections.
	ser2net []string
}

// target is one way of reaching a virtual board's console, with what it
// measured.
type target struct {
	name    string
	board   *sim.Board
	srv     *ser2net.Server
	con     *serialx.Console
	rtt     []time.Duration
	streamB int64
	streamT time.Duration
	chunks  int
}

func run(o options) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "netbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	targets, err := openTargets(ctx, dir, o)
	defer closeTargets(targets)
	if err != nil {
		return err
	}
	if err := roundTrips(ctx, targets, o); err != nil {
		return err
	}
	want := append(sim.StreamData(o.chunk, "crlf"), "\r\n"+sim.DefaultPrompt...)
	if err := streamAll(ctx, targets, o, want); err != nil {
		return err
	}
	for _, t := range targets {
		if err := t.con.Close(); err != nil {
			return err
		}
		if err := checkLog(t, want); err != nil {
			return err
		}
	}
	printResults(targets, o)
	return nil
}

// openTargets starts a board for each target, the pty and ser2net raw and
// with RFC 2217 in front of it, and opens its console as hilrun opens a
// device, logging under dir, once the prompt is there. It returns the
// targets it made even on an error, for closeTargets.
func openTargets(ctx context.Context, dir string, o options) ([]*target, error) {
	var targets []*target
	for _, m := range []ser2net.Mode{"", ser2net.Raw, ser2net.RFC2217} {
		t := &target{name: "pty", board: sim.New(sim.Options{})}
		targets = append(targets, t)
		if err := t.board.Start(); err != nil {
			return targets, err
		}
		path := t.board.SerialPath()
		if m != "" {
			sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			var err error
			t.srv, err = ser2net.Start(sctx, dir, path, m, o.ser2net...)
			cancel()
			if err != nil {
				return targets, err
			}
			path, t.name = t.srv.URL(), "ser2net "+string(m)
		}
		var err error
		t.con, err = serialx.Open(ctx, t.name, serialx.Config{Devices: bench.Gates.Devices, Dial: bench.Gates.Dial, Path: path, NoLock: true, LogDir: dir + "/" + string(m) + "log", BufferSize: 2*o.chunk + 4096})
		if err != nil {
			return targets, err
		}
		if _, _, err := expect(ctx, t.con, 0, nil, sim.DefaultPrompt); err != nil {
			return targets, fmt.Errorf("%s: no prompt: %w", t.name, err)
		}
	}
	return targets, nil
}

// closeTargets closes each target's console, its ser2net and its board.
func closeTargets(targets []*target) {
	for _, t := range targets {
		if t.con != nil {
			t.con.Close()
		}
		if t.srv != nil {
			t.srv.Stop()
		}
		t.board.Close()
	}
}

// roundTrips times o.n round trips ("version", then its reply and the
// prompt) per target, the targets taking turns of o.batch.
func roundTrips(ctx context.Context, targets []*target, o options) error {
	reply := sim.DefaultVersion + "\r\n" + sim.DefaultPrompt
	for done := 0; done < o.n; done += o.batch {
		for _, t := range targets {
			for range min(o.batch, o.n-done) {
				start := time.Now()
				if _, _, err := expect(ctx, t.con, 0, []byte("version\r\n"), reply); err != nil {
					return fmt.Errorf("%s: round trip: %w", t.name, err)
				}
				t.rtt = append(t.rtt, time.Since(start))
			}
		}
	}
	return nil
}

// streamAll has each target's board stream o.chunk bytes again and again
// for o.streamFor, the targets taking turns chunk by chunk, and checks
// every chunk received against want, what the board sent.
func streamAll(ctx context.Context, targets []*target, o options, want []byte) error {
	cmd := fmt.Appendf(nil, "stream %d\r\n", o.chunk)
	for {
		busy := false
		for _, t := range targets {
			if t.streamT >= o.streamFor {
				continue
			}
			busy = true
			start := time.Now()
			cur, m, err := expect(ctx, t.con, 0, cmd, string(want[len(want)-300:]))
			if err != nil {
				return fmt.Errorf("%s: stream: %w", t.name, err)
			}
			t.streamT += time.Since(start)
			got := readAll(t.con, cur, m.End)
			if !bytes.Equal(got, want) {
				return fmt.Errorf("%s: stream chunk %d differs from what the board sent (%d bytes received, %d sent)", t.name, t.chunks+1, len(got), len(want))
			}
			t.streamB += int64(o.chunk)
			t.chunks++
		}
		if !busy {
			return nil
		}
	}
}

// printResults prints the round trips of each target against the pty's,
// and each target's stream.
func printResults(targets []*target, o options) {
	base := bench.Summarize(targets[0].rtt)
	fmt.Printf("ser2net options: %q\n", o.ser2net)
	fmt.Printf("round trip (send \"version\", expect the reply and the prompt), %d per target, interleaved in turns of %d:\n", o.n, o.batch)
	fmt.Printf("  %-16s %10s %10s %10s %14s %14s %8s\n", "target", "median", "p99", "max", "added median", "added p99", "ratio")
	for _, t := range targets {
		s := bench.Summarize(t.rtt)
		fmt.Printf("  %-16s %10s %10s %10s %14s %14s %8.2f\n", t.name, us(s.Median), us(s.P99), us(s.Max),
			us(s.Median-base.Median), us(s.P99-base.P99), float64(s.Median)/float64(base.Median))
	}
	fmt.Printf("stream (\"stream %d\" repeated for %s per target, chunks interleaved), every byte checked, raw log complete:\n", o.chunk, o.streamFor)
	for _, t := range targets {
		fmt.Printf("  %-16s %6d chunks %8.1f MB in %6.2fs = %6.2f MB/s, 0 bytes lost\n", t.name, t.chunks,
			float64(t.streamB)/1e6, t.streamT.Seconds(), float64(t.streamB)/1e6/t.streamT.Seconds())
	}
}

// expect writes cmd (when not nil) and waits up to a minute for want after
// it, returning the cursor before the write and the match.
func expect(ctx context.Context, c *serialx.Console, from int64, cmd []byte, want string) (int64, stream.Match, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if cmd != nil {
		var err error
		if from, err = c.Write(ctx, cmd); err != nil {
			return from, stream.Match{}, err
		}
	}
	m, err := c.Expect(ctx, from, []stream.Pattern{stream.Literal(want)}, nil)
	return from, m, err
}

// readAll returns the console's retained output from from to end.
func readAll(c *serialx.Console, from, end int64) []byte {
	var out []byte
	for from < end {
		p, start, next := c.Read(from, int(end-from))
		if start != from || len(p) == 0 {
			break // no longer retained: the comparison fails
		}
		out = append(out, p...)
		from = next
	}
	return out
}

// checkLog checks the raw log holds every byte received and every chunk.
func checkLog(t *target, chunk []byte) error {
	raw, _ := t.con.LogPaths()
	log, err := os.ReadFile(raw)
	if err != nil {
		return err
	}
	if err := t.con.LogErr(); err != nil {
		return err
	}
	if rx := t.con.Stats().RxBytes; int64(len(log)) != rx {
		return fmt.Errorf("%s: the raw log holds %d bytes, %d were received", t.name, len(log), rx)
	}
	if got := bytes.Count(log, chunk); got != t.chunks {
		return errors.New(t.name + ": the raw log does not hold every stream chunk")
	}
	return nil
}

// us formats d in microseconds, "1234µs".
func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }

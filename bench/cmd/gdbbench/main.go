// Command gdbbench measures one 32-bit memory read through hilrun's GDB
// remote backend (pkg/gdbremote) on U-Boot under QEMU, side by side in one
// run with the sides alternating:
//
//   - session: gdbremote.Session.ReadMemory on a halted guest;
//   - raw: the least a client can do, measured here: write $m...#cs on a
//     TCP_NODELAY connection and read the reply packet;
//   - gdb: gdb-multiarch -batch connecting, reading with x/wx and
//     disconnecting, once per access, as a bench without hilrun does.
//
// Each side has a QEMU of its own, started with -S so the guest stays
// halted (QEMU's stub takes one debugger at a time). Ratios are the median
// of the per-round ratios of medians. Then, on a guest that runs, it
// measures the same read through the session, which halts the guest,
// reads and resumes it.
//
// Run it with:
//
//	go run ./bench/cmd/gdbbench -rounds 10 -n 200 -gdb-n 2
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hilrun/hilrun/bench"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/gdbremote"
)

const ubootBin = "/usr/lib/u-boot/qemu_arm/u-boot.bin"

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 10, "rounds, the sides alternating")
	flag.IntVar(&o.n, "n", 200, "reads per round through the session and raw RSP")
	flag.IntVar(&o.gdbN, "gdb-n", 2, "gdb-multiarch -batch runs per round")
	flag.Uint64Var(&o.addr, "addr", 0x40000000, "address read (RAM; QEMU puts the device tree there)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gdbbench:", err)
		os.Exit(3)
	}
}

// options are gdbbench's flags.
type options struct {
	// rounds alternate the sides; each reads n times, gdb-multiarch gdbN
	// times, the word at addr.
	rounds, n, gdbN int
	addr            uint64
}

// qemu is one qemu-system-arm running U-Boot with its gdbstub on addr.
type qemu struct {
	proc *process.Proc
	addr string
	done chan struct{}
}

func startQEMU(ctx context.Context, paused bool) (*qemu, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"-M", "virt", "-nographic", "-monitor", "none", "-serial", "null",
		"-bios", ubootBin, "-gdb", "tcp:" + addr}
	if paused {
		args = append(args, "-S")
	}
	proc, err := bench.Gates.Procs.Start(process.Spec{Purpose: process.Emulator, Argv: append([]string{"qemu-system-arm"}, args...), Stderr: os.Stderr})
	if err != nil {
		return nil, err
	}
	q := &qemu{proc: proc, addr: addr, done: make(chan struct{})}
	go func() { proc.Wait(); close(q.done) }()
	return q, nil
}

func (q *qemu) stop() {
	q.proc.Kill()
	<-q.done
}

// dial connects to q's stub once it listens; a refused connection has
// no effect on the guest.
func dial(ctx context.Context, q *qemu) (*gdbremote.Session, error) {
	return untilListening(func() (*gdbremote.Session, error) {
		return gdbremote.Dial(ctx, q.addr, gdbremote.Options{Dial: bench.Gates.Dial})
	})
}

// untilListening calls connect every 10 ms until it succeeds, fails with
// anything but a refused connection, or has been refused for 30 s: QEMU's
// stub listens a moment after QEMU starts.
func untilListening[T any](connect func() (T, error)) (T, error) {
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		c, err := connect()
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Since(start) > 30*time.Second {
			return c, err
		}
	}
}

// raw is the least code that reads memory over the GDB remote protocol.
type raw struct {
	c   *net.TCPConn
	r   *bufio.Reader
	req []byte
}

// dialRaw connects to q's stub once it listens, with TCP_NODELAY, for
// reads of the word at addr.
func dialRaw(ctx context.Context, q *qemu, addr uint64) (*raw, error) {
	var d net.Dialer
	c, err := untilListening(func() (net.Conn, error) { return d.DialContext(ctx, "tcp", q.addr) })
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	tc.SetNoDelay(true)
	body := fmt.Sprintf("m%x,4", addr)
	var sum byte
	for i := range len(body) {
		sum += body[i]
	}
	return &raw{c: tc, r: bufio.NewReader(tc), req: fmt.Appendf(nil, "$%s#%02x", body, sum)}, nil
}

// read sends the request and returns the reply packet's data.
func (r *raw) read() (string, error) {
	if _, err := r.c.Write(r.req); err != nil {
		return "", err
	}
	if _, err := r.r.ReadString('$'); err != nil {
		return "", err
	}
	data, err := r.r.ReadString('#')
	if err != nil {
		return "", err
	}
	if _, err := r.r.Discard(2); err != nil {
		return "", err
	}
	return strings.TrimSuffix(data, "#"), nil
}

var gdbValue = regexp.MustCompile(`(?m)^0x[0-9a-f]+:\s+0x([0-9a-f]+)`)

// gdbRead reads one word with gdb-multiarch -batch, connecting and
// disconnecting (disconnect, not detach: QEMU resumes a guest on detach).
func gdbRead(ctx context.Context, q *qemu, addr uint64) (uint64, error) {
	out, err := exec.CommandContext(ctx, "gdb-multiarch", "-batch", "-nx",
		"-ex", "set architecture arm", "-ex", "target remote "+q.addr,
		"-ex", fmt.Sprintf("x/wx 0x%x", addr), "-ex", "disconnect").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("gdb-multiarch: %w: %s", err, out)
	}
	m := gdbValue.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("gdb-multiarch printed no value: %s", out)
	}
	return strconv.ParseUint(string(m[1]), 16, 32)
}

// side is one way of reading the word: once reads it, per times a round.
type side struct {
	name    string
	samples []time.Duration
	medians []time.Duration // per round
	once    func() (uint64, error)
	per     int
}

func run(o options) error {
	ctx := context.Background()
	if _, err := exec.LookPath("gdb-multiarch"); err != nil {
		return fmt.Errorf("gdb-multiarch is not installed (apt-get install gdb-multiarch): %w", err)
	}
	if err := halted(ctx, o); err != nil {
		return err
	}
	// The same read on a guest that runs.
	return running(ctx, o)
}

// halted measures the three sides on halted guests, a QEMU each, in
// alternating rounds, and prints their table and ratios.
func halted(ctx context.Context, o options) error {
	var qs []*qemu
	defer func() {
		for _, q := range qs {
			q.stop()
		}
	}()
	for range 3 {
		q, err := startQEMU(ctx, true)
		if err != nil {
			return err
		}
		qs = append(qs, q)
	}
	sess, err := dial(ctx, qs[0])
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.WasRunning() {
		return errors.New("the session's guest runs: want it halted (-S)")
	}
	rw, err := dialRaw(ctx, qs[1], o.addr)
	if err != nil {
		return err
	}
	defer rw.c.Close()
	want, err := sess.ReadMemory(ctx, o.addr, 32, 1)
	if err != nil {
		return err
	}
	sides := haltedSides(ctx, o, sess, rw, qs[2])
	if err := warmUp(sides, want[0]); err != nil {
		return err
	}
	if err := measure(sides, o.rounds, want[0]); err != nil {
		return err
	}
	printHalted(sides, o)
	return nil
}

// haltedSides are the sides of halted: the session, the raw client and
// gdb-multiarch on gdbQ's guest.
func haltedSides(ctx context.Context, o options, sess *gdbremote.Session, rw *raw, gdbQ *qemu) []*side {
	return []*side{
		{name: "session", per: o.n, once: func() (uint64, error) {
			v, err := sess.ReadMemory(ctx, o.addr, 32, 1)
			if err != nil {
				return 0, err
			}
			return v[0], nil
		}},
		{name: "raw RSP", per: o.n, once: func() (uint64, error) {
			h, err := rw.read()
			if err != nil {
				return 0, err
			}
			if len(h) != 8 {
				return 0, fmt.Errorf("raw reply %q", h)
			}
			v, err := strconv.ParseUint(h[6:8]+h[4:6]+h[2:4]+h[0:2], 16, 32)
			return v, err
		}},
		{name: "gdb-multiarch -batch", per: o.gdbN, once: func() (uint64, error) { return gdbRead(ctx, gdbQ, o.addr) }},
	}
}

// warmUp reads with every side up to 10 times, unmeasured, each read
// checked against want; gdb's first run also loads its own files.
func warmUp(sides []*side, want uint64) error {
	for _, s := range sides {
		for range min(s.per, 10) {
			v, err := s.once()
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if v != want {
				return fmt.Errorf("%s read 0x%x, the session 0x%x", s.name, v, want)
			}
		}
	}
	return nil
}

// measure runs rounds of every side's reads, each read checked against
// want, the order of the sides rotating from round to round, and adds each
// round's times and median to its side.
func measure(sides []*side, rounds int, want uint64) error {
	for r := range rounds {
		order := append(slices.Clone(sides[r%3:]), sides[:r%3]...)
		for _, s := range order {
			var round []time.Duration
			for range s.per {
				t0 := time.Now()
				v, err := s.once()
				d := time.Since(t0)
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				if v != want {
					return fmt.Errorf("%s read 0x%x, want 0x%x", s.name, v, want)
				}
				round = append(round, d)
			}
			s.samples = append(s.samples, round...)
			s.medians = append(s.medians, bench.Summarize(round).Median)
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done\n", r+1, rounds)
	}
	return nil
}

// printHalted prints the table of the halted sides and their ratios
// against the goals.
func printHalted(sides []*side, o options) {
	fmt.Printf("One 32-bit read at 0x%x, U-Boot halted under QEMU (qemu-system-arm -M virt -S), %d rounds:\n\n", o.addr, o.rounds)
	fmt.Println("| side | reads | median | p99 |")
	fmt.Println("|---|---|---|---|")
	for _, s := range sides {
		fmt.Printf("| %s | %d | %s | %s |\n", s.name, len(s.samples), us(bench.Summarize(s.samples).Median), us(bench.Summarize(s.samples).P99))
	}
	fmt.Printf("\ngdb-multiarch -batch / session: %.0fx (median of per-round ratios; goal >= 100x)\n", bench.MedianRatio(sides[2].medians, sides[0].medians))
	fmt.Printf("session / raw RSP: %.2fx (median of per-round ratios; goal <= 1.5x)\n", bench.MedianRatio(sides[0].medians, sides[1].medians))
}

// running measures the session's read on a guest that runs, which each
// read halts and resumes, and prints its median and p99.
func running(ctx context.Context, o options) error {
	q, err := startQEMU(ctx, false)
	if err != nil {
		return err
	}
	defer q.stop()
	rs, err := dial(ctx, q)
	if err != nil {
		return err
	}
	defer rs.Close()
	if !rs.WasRunning() {
		return errors.New("the running guest was not found running")
	}
	var reads []time.Duration
	for i := range o.rounds*o.n + 10 {
		t0 := time.Now()
		_, err := rs.ReadMemory(ctx, o.addr, 32, 1)
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("running: %w", err)
		}
		if !rs.LastAccessHalted() {
			return errors.New("running: the read did not halt the guest")
		}
		if i >= 10 {
			reads = append(reads, d)
		}
	}
	fmt.Printf("\nOn a running guest (halt, read, resume; LastAccessHalted true): %d reads, median %s, p99 %s\n",
		len(reads), us(bench.Summarize(reads).Median), us(bench.Summarize(reads).P99))
	return nil
}

// us formats d in microseconds, or milliseconds from 1 ms on.
func us(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1f µs", float64(d)/1e3)
}

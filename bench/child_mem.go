package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The words scenarios (e) and (f) access: the firmware's millisecond
// counter, and the GPIO port's bit set/reset register with the values that
// switch the LED on and off.
const (
	memAddr   = sim.CounterAddr
	ledReg    = sim.GPIOBSRR
	ledSet    = 1 << sim.LEDPin
	ledReset  = 1 << (sim.LEDPin + 16)
	memAddrTx = "0x20000000"
)

// memSession times warmup+n reads of one 32-bit word through one
// persistent OpenOCD session: openocd.Session.ReadMemory alone.
func memSession(ctx context.Context, addr string, n, warmup int) (childOutput, error) {
	s, err := openocd.Dial(ctx, addr, openocd.WithGate(Gates.Dial))
	if err != nil {
		return childOutput{}, err
	}
	defer s.Close()
	var out childOutput
	for i := range warmup + n {
		t0 := time.Now()
		vals, err := s.ReadMemory(ctx, uint64(memAddr), 32, 1)
		d := time.Since(t0)
		if err != nil {
			return childOutput{}, fmt.Errorf("read %d: %w", i, err)
		}
		if i >= warmup {
			out.SamplesNs = append(out.SamplesNs, d.Nanoseconds())
			out.Values = append(out.Values, vals[0])
		}
	}
	return out, nil
}

// memRunner times warmup+n mem_read steps run by the runner, as a user
// writes them, with the probe bound to a running OpenOCD as
// `hilrun run --openocd target=HOST:PORT` binds it. Each sample is the
// step's duration as the runner measured it.
func memRunner(ctx context.Context, addr string, n, warmup int) (childOutput, error) {
	src := fmt.Sprintf(`name: mem-read
expect_timeout: 10s
steps:
  - repeat: {count: %d}
    steps:
      - mem_read: %s
`, warmup+n, memAddrTx)
	res, err := runBound(ctx, src, nil, map[string]string{steps.DefaultProbe: addr}, "")
	if err != nil {
		return childOutput{}, err
	}
	reads := stepsOf(res, steps.KindMemRead)
	if len(reads) != warmup+n {
		return childOutput{}, fmt.Errorf("ran %d mem_read steps, want %d", len(reads), warmup+n)
	}
	var out childOutput
	for _, s := range reads[warmup:] {
		vals, _ := s.Data["values"].([]uint64)
		if len(vals) != 1 {
			return childOutput{}, fmt.Errorf("step %s read %v, want one value", s.Path, s.Data["values"])
		}
		out.SamplesNs = append(out.SamplesNs, s.Duration.Nanoseconds())
		out.Values = append(out.Values, vals[0])
	}
	return out, nil
}

// telnetWord finds the word mdw printed on OpenOCD's telnet console.
var telnetWord = regexp.MustCompile(`0x20000000: ([0-9a-fA-F]{8}) `)

// telnetConn is a connection to OpenOCD's telnet server used as a person
// types into it: a line, then wait for its output and the next prompt.
type telnetConn struct {
	c   net.Conn
	buf []byte
	got []byte
}

func dialTelnet(ctx context.Context, addr string) (*telnetConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	t := &telnetConn{c: c, buf: make([]byte, 4096)}
	if err := t.readUntil(func(b []byte) bool { return bytes.HasSuffix(b, []byte("> ")) }); err != nil {
		c.Close()
		return nil, err
	}
	return t, nil
}

func (t *telnetConn) readUntil(done func([]byte) bool) error {
	for !done(t.got) {
		k, err := t.c.Read(t.buf)
		if err != nil {
			return fmt.Errorf("telnet: %w after %q", err, clip(string(t.got), 200))
		}
		t.got = append(t.got, t.buf[:k]...)
	}
	return nil
}

// do types line and returns what the server printed until the prompt
// that follows the line's output.
func (t *telnetConn) do(line string) ([]byte, error) {
	t.got = t.got[:0]
	if _, err := t.c.Write([]byte(line + "\n")); err != nil {
		return nil, err
	}
	// The server echoes the line, then prints its output and a prompt.
	err := t.readUntil(func(b []byte) bool {
		return bytes.IndexByte(b, '\n') >= 0 && bytes.HasSuffix(b, []byte("> "))
	})
	return t.got, err
}

func (t *telnetConn) Close() error { return t.c.Close() }

// sessionReadLine is as long as the line openocd.Session sends to read
// the word (with a three-digit request number): OpenOCD's telnet server
// echoes it a character at a time before it runs it.
var sessionReadLine = len(`_hilrun 100 "read_memory 0x20000000 32 1"`)

// memTelnet is a diagnostic for scenario (e): warmup+n reads typed into
// OpenOCD's telnet server as a person would type them, `mdw 0x20000000`,
// each done when the word and the next prompt have arrived. It is the
// least a persistent session can cost with OpenOCD on this board, with
// none of hilrun's framing. With pad, spaces lengthen the line to
// sessionReadLine, which shows what the echo of a longer line costs.
func memTelnet(ctx context.Context, addr string, n, warmup int, pad bool) (childOutput, error) {
	t, err := dialTelnet(ctx, addr)
	if err != nil {
		return childOutput{}, err
	}
	defer t.Close()
	line := "mdw " + memAddrTx
	if pad {
		line += strings.Repeat(" ", max(0, sessionReadLine-len(line)))
	}
	var out childOutput
	for i := range warmup + n {
		t0 := time.Now()
		got, err := t.do(line)
		el := time.Since(t0)
		if err != nil {
			return childOutput{}, err
		}
		m := telnetWord.FindSubmatch(got)
		if m == nil {
			return childOutput{}, fmt.Errorf("telnet: no word in %q", got)
		}
		v, err := strconv.ParseUint(string(m[1]), 16, 32)
		if err != nil {
			return childOutput{}, err
		}
		if i >= warmup {
			out.SamplesNs = append(out.SamplesNs, el.Nanoseconds())
			out.Values = append(out.Values, v)
		}
	}
	return out, nil
}

// toggleTelnet is a diagnostic for scenario (f): the LED writes typed into
// OpenOCD's telnet server (`mww 0x48000018 V`), each at its deadline on
// the runner's schedule, waited for as the runner waits (sleepPrecise).
// It is what any persistent session gets from OpenOCD on this board.
func toggleTelnet(ctx context.Context, addr string, n int, every time.Duration) (childOutput, error) {
	t, err := dialTelnet(ctx, addr)
	if err != nil {
		return childOutput{}, err
	}
	defer t.Close()
	if _, err := t.do("mdw " + memAddrTx); err != nil {
		return childOutput{}, err
	}
	var out childOutput
	t0 := time.Now()
	for i := 0; i <= n; i++ {
		sleepPrecise(t0.Add(time.Duration(i)*every), preciseWindow)
		v := ledSet
		if i%2 == 1 {
			v = ledReset
		}
		a := time.Now()
		if _, err := t.do(fmt.Sprintf("mww 0x%08x 0x%x", ledReg, v)); err != nil {
			return childOutput{}, err
		}
		out.SamplesNs = append(out.SamplesNs, time.Since(a).Nanoseconds())
	}
	return out, nil
}

// processTool runs OpenOCD once per operation, as tools that shell out to
// it do: `openocd -f board.cfg -c init -c CMD -c shutdown`.
type processTool struct {
	bin, dir, cfg string
}

// newProcessTool writes the OpenOCD configuration of the board whose JTAG
// port listens at bitbang into a temporary directory.
func newProcessTool(bin, bitbang string) (*processTool, error) {
	dir, err := os.MkdirTemp("", "hilbench-ocd-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "board.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(bitbang)), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &processTool{bin: bin, dir: dir, cfg: cfg}, nil
}

func (p *processTool) Close() { os.RemoveAll(p.dir) }

// run runs one OpenOCD process for cmd and returns everything it printed
// and its wall time, from the start of the process to its exit.
func (p *processTool) run(ctx context.Context, cmd string) (string, time.Duration, error) {
	c := exec.CommandContext(ctx, p.bin, "-f", p.cfg, "-c", "init", "-c", cmd, "-c", "shutdown")
	c.Dir = p.dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	t0 := time.Now()
	err := c.Run()
	d := time.Since(t0)
	if err != nil {
		return out.String(), d, fmt.Errorf("openocd -c %q: %w: %s", cmd, err, lastLines(out.String(), 3))
	}
	return out.String(), d, nil
}

// mdwLine finds the word mdw printed.
var mdwLine = regexp.MustCompile(`(?m)^0x20000000: ([0-9a-fA-F]{8})\b`)

// read runs `mdw 0x20000000` in a process of its own and parses the word.
func (p *processTool) read(ctx context.Context) (uint64, time.Duration, error) {
	out, d, err := p.run(ctx, "mdw "+memAddrTx)
	if err != nil {
		return 0, d, err
	}
	m := mdwLine.FindStringSubmatch(out)
	if m == nil {
		return 0, d, fmt.Errorf("openocd printed no word for mdw %s: %s", memAddrTx, lastLines(out, 3))
	}
	v, err := strconv.ParseUint(m[1], 16, 32)
	return v, d, err
}

// memProcess times warmup+n reads of the same word by a process per read,
// each the wall time of one OpenOCD process that connects to the board's
// JTAG port, initialises, reads and shuts down.
func memProcess(ctx context.Context, bin, bitbang string, n, warmup int) (childOutput, error) {
	p, err := newProcessTool(bin, bitbang)
	if err != nil {
		return childOutput{}, err
	}
	defer p.Close()
	var out childOutput
	for i := range warmup + n {
		v, d, err := p.read(ctx)
		if err != nil {
			return childOutput{}, fmt.Errorf("read %d: %w", i, err)
		}
		if i >= warmup {
			out.SamplesNs = append(out.SamplesNs, d.Nanoseconds())
			out.Values = append(out.Values, v)
		}
	}
	return out, nil
}

// toggleRunner toggles the LED n+1 times, every period, by writing BSRR
// with mem_write steps run by the runner, as a user writes the sequence:
// a repeat with `every`, its set step choosing the set or the reset half
// by the iteration's parity. One unmeasured mem_read comes first. It
// returns the mem_write steps' durations; the board timestamps the writes.
func toggleRunner(ctx context.Context, addr string, n int, every time.Duration) (childOutput, error) {
	src := fmt.Sprintf(`name: toggle
expect_timeout: 10s
steps:
  - mem_read: %s
  - repeat: {count: %d, every: %s, as: i}
    steps:
      - set:
          v: {expr: "i %% 2 == 0 ? %d : %d"}
      - mem_write: 0x%08x
        value: "${v}"
`, memAddrTx, n+1, every, ledSet, ledReset, ledReg)
	res, err := runBound(ctx, src, nil, map[string]string{steps.DefaultProbe: addr}, "")
	if err != nil {
		return childOutput{}, err
	}
	writes := stepsOf(res, steps.KindMemWrite)
	if len(writes) != n+1 {
		return childOutput{}, fmt.Errorf("ran %d mem_write steps, want %d", len(writes), n+1)
	}
	var out childOutput
	for _, s := range writes {
		out.SamplesNs = append(out.SamplesNs, s.Duration.Nanoseconds())
	}
	return out, nil
}

// toggleProcess toggles the LED n+1 times, every period, with an OpenOCD
// process per write (`mww 0x48000018 V`), started on the same absolute
// schedule as the runner's repeat; a write that falls behind starts the
// next one at once. One unmeasured read comes first. It returns each
// process's wall time.
func toggleProcess(ctx context.Context, bin, bitbang string, n int, every time.Duration) (childOutput, error) {
	p, err := newProcessTool(bin, bitbang)
	if err != nil {
		return childOutput{}, err
	}
	defer p.Close()
	if _, _, err := p.read(ctx); err != nil {
		return childOutput{}, err
	}
	var out childOutput
	t0 := time.Now()
	for i := 0; i <= n; i++ {
		if d := time.Until(t0.Add(time.Duration(i) * every)); d > 0 {
			time.Sleep(d)
		}
		v := ledSet
		if i%2 == 1 {
			v = ledReset
		}
		_, d, err := p.run(ctx, fmt.Sprintf("mww 0x%08x 0x%x", ledReg, v))
		if err != nil {
			return childOutput{}, fmt.Errorf("write %d: %w", i, err)
		}
		out.SamplesNs = append(out.SamplesNs, d.Nanoseconds())
	}
	return out, nil
}

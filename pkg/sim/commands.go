// The shell's commands: help, version, echo, led, status, reboot, panic,
// stream, peek, poke, sleep and flaky, and the replies they print.

package sim

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// commandHelp is printed by `help`, one command per line.
var commandHelp = []string{
	"help                     list commands",
	"version                  print the firmware version",
	"echo [-n] TEXT           print TEXT (-n: without a line ending)",
	"led on|off               switch the LED",
	"status                   print LED, counter, blink flag and uptime",
	"reboot                   restart the firmware",
	"panic                    crash, then reboot",
	"stream N                 print N bytes of test data",
	"peek ADDR [WIDTH]        read memory (WIDTH 8, 16 or 32 bits, default 32)",
	"poke ADDR VALUE [WIDTH]  write memory",
	"sleep MS                 wait MS milliseconds, after sending what came before",
	"flaky NAME FAILS|reset   print FAIL NAME for the first FAILS calls, then OK NAME; reset forgets",
	"CMD; CMD                 run commands in turn",
}

// run executes one command line, leaving its reply in out (every line ended)
// or, for stream data, writing it directly. Commands separated by ';' run
// in turn. When Ctrl-C cancels ctx the command stops early; finish reports
// that.
func (s *session) run(ctx context.Context, line string, out *bytes.Buffer) {
	for cmd := range strings.SplitSeq(line, ";") {
		if ctx.Err() != nil || s.b.hung.Load() {
			return
		}
		s.runOne(ctx, cmd, out)
	}
}

func (s *session) runOne(ctx context.Context, line string, out *bytes.Buffer) {
	line = strings.TrimLeft(line, " \t")
	if line == "" {
		return
	}
	if sleep(ctx, s.b.opts.Latency) != nil {
		return
	}
	name, rest := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		name, rest = line[:i], strings.TrimLeft(line[i:], " \t")
	}
	args := strings.Fields(rest)
	if s.runLink(name, rest, out) {
		return
	}
	mem := s.b.mem
	switch name {
	case "help":
		for _, h := range commandHelp {
			s.println(out, h)
		}
	case "version":
		s.println(out, s.b.opts.Version)
	case "echo":
		if text, ok := strings.CutPrefix(rest, "-n"); ok && (text == "" || text[0] == ' ' || text[0] == '\t') {
			out.WriteString(strings.TrimLeft(text, " \t"))
			break
		}
		s.println(out, rest)
	case "led":
		s.led(args, out)
	case "status":
		s.status(out)
	case "reboot":
		mem.Reset()
		s.banner(out)
	case "panic":
		s.crash(out)
		mem.Reset()
		s.banner(out)
	case "stream":
		s.stream(ctx, args, out)
	case "peek":
		s.peek(args, out)
	case "poke":
		s.poke(args, out)
	case "sleep":
		s.sleepCmd(ctx, args, out)
	case "flaky":
		s.flaky(args, out)
	default:
		s.println(out, "unknown command: "+name+" (try help)")
	}
}

func (s *session) println(out *bytes.Buffer, line string) {
	out.WriteString(line)
	out.Write(s.le)
}

// banner writes the boot banner: fixed lines, then a blank line.
func (s *session) banner(out *bytes.Buffer) {
	s.println(out, BannerTitle)
	s.println(out, s.b.opts.Version)
	s.println(out, "boot: ok")
	s.println(out, "")
}

func (s *session) crash(out *bytes.Buffer) {
	for _, l := range []string{
		"Guru Meditation Error: core 0 panic'ed (HardFault)",
		"HardFault: forced by the panic command",
		"PC: 0x08000abc",
		"LR: 0x08000a51",
		"SP: 0x2000ffd8",
		"xPSR: 0x61000003",
		"CFSR: 0x00000000  HFSR: 0x40000000",
		"Rebooting...",
		"",
	} {
		s.println(out, l)
	}
}

func (s *session) led(args []string, out *bytes.Buffer) {
	if len(args) != 1 || (args[0] != "on" && args[0] != "off") {
		s.println(out, "usage: led on|off")
		return
	}
	// Set and reset through BSRR, as firmware does to avoid a
	// read-modify-write of ODR.
	v := uint32(1) << LEDPin
	if args[0] == "off" {
		v <<= 16
	}
	if err := s.b.mem.Write(GPIOBSRR, 32, v); err != nil {
		s.println(out, "bus fault at "+hex32(GPIOBSRR))
		return
	}
	s.println(out, "LED "+args[0])
}

func (s *session) status(out *bytes.Buffer) {
	mem := s.b.mem
	led := "off"
	if mem.LED() {
		led = "on"
	}
	counter, _ := mem.Read(CounterAddr, 32)
	blink, _ := mem.Read(BlinkAddr, 32)
	s.println(out, "led: "+led)
	s.println(out, "counter: "+strconv.FormatUint(uint64(counter), 10))
	s.println(out, "blink: "+strconv.FormatUint(uint64(blink), 10))
	s.println(out, "uptime_ms: "+strconv.FormatInt(mem.uptime().Milliseconds(), 10))
}

// stream writes n bytes of StreamData at full speed, then a line ending.
func (s *session) stream(ctx context.Context, args []string, out *bytes.Buffer) {
	if len(args) != 1 {
		s.println(out, "usage: stream N")
		return
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || n < 0 {
		s.println(out, "invalid length: "+args[0])
		return
	}
	r := NewStreamReader(n, s.b.opts.LineEnding)
	buf := make([]byte, min(n, streamChunk))
	for {
		k, _ := r.Read(buf)
		if k == 0 {
			break
		}
		if s.write(ctx, buf[:k]) != nil {
			return
		}
	}
	out.Write(s.le)
}

func (s *session) peek(args []string, out *bytes.Buffer) {
	if len(args) < 1 || len(args) > 2 {
		s.println(out, "usage: peek ADDR [WIDTH]")
		return
	}
	addr, ok := s.parseAddr(args[0], out)
	if !ok {
		return
	}
	width, ok := s.parseWidth(args[1:], out)
	if !ok {
		return
	}
	v, err := s.b.mem.Read(addr, width)
	if err != nil {
		s.println(out, "bus fault at "+hex32(addr))
		return
	}
	s.println(out, fmt.Sprintf("%s: 0x%0*x", hex32(addr), width/4, v))
}

func (s *session) poke(args []string, out *bytes.Buffer) {
	if len(args) < 2 || len(args) > 3 {
		s.println(out, "usage: poke ADDR VALUE [WIDTH]")
		return
	}
	addr, ok := s.parseAddr(args[0], out)
	if !ok {
		return
	}
	v, err := strconv.ParseUint(args[1], 0, 32)
	if err != nil {
		s.println(out, "invalid value: "+args[1])
		return
	}
	width, ok := s.parseWidth(args[2:], out)
	if !ok {
		return
	}
	if uint32(v) > widthMask(width) {
		s.println(out, fmt.Sprintf("value %s does not fit in %d bits", args[1], width))
		return
	}
	if err := s.b.mem.Write(addr, width, uint32(v)); err != nil {
		s.println(out, "bus fault at "+hex32(addr))
		return
	}
	s.println(out, "ok")
}

func (s *session) sleepCmd(ctx context.Context, args []string, out *bytes.Buffer) {
	if len(args) != 1 {
		s.println(out, "usage: sleep MS")
		return
	}
	ms, err := strconv.ParseUint(args[0], 10, 32)
	if err != nil {
		s.println(out, "invalid duration: "+args[0])
		return
	}
	// What came before the pause leaves now, as a board's UART would send
	// it: `echo -n adc=40; sleep 300; echo 95` prints a number in two parts.
	if out.Len() > 0 {
		if s.write(ctx, out.Bytes()) != nil {
			return
		}
		out.Reset()
	}
	_ = sleep(ctx, time.Duration(ms)*time.Millisecond) // finish reports a Ctrl-C
}

func (s *session) parseAddr(arg string, out *bytes.Buffer) (uint32, bool) {
	a, err := strconv.ParseUint(arg, 0, 32)
	if err != nil {
		s.println(out, "invalid address: "+arg)
		return 0, false
	}
	return uint32(a), true
}

// parseWidth reads the optional WIDTH argument, in bits.
func (s *session) parseWidth(args []string, out *bytes.Buffer) (int, bool) {
	if len(args) == 0 {
		return 32, true
	}
	switch args[0] {
	case "8", "16", "32":
		w, _ := strconv.Atoi(args[0])
		return w, true
	}
	s.println(out, "invalid width: "+args[0]+" (want 8, 16 or 32)")
	return 0, false
}

func hex32(v uint32) string {
	return fmt.Sprintf("0x%08x", v)
}

// sleep waits for d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

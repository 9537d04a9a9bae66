package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	ctrlC = 0x03
	// maxLine bounds a received line, like a firmware's line buffer; bytes
	// past it are dropped until the line ends.
	maxLine = 64 << 10
	// maxQueued bounds the lines waiting while a command runs; further lines
	// are dropped, like a UART overrun.
	maxQueued = 4096
	// streamChunk is the size of each write of `stream` data.
	streamChunk = 64 << 10
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
	"CMD; CMD                 run commands in turn",
}

// session is one plug-in of the board: a pty pair, the goroutine reading
// input from the master and the goroutine running the shell.
type session struct {
	b      *Board
	le     []byte
	master *os.File
	slave  *os.File // held open so the master never sees a hang-up
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// wmu serialises writes to the master, so echo never lands inside a
	// reply chunk.
	wmu sync.Mutex

	// Input state, owned by the read goroutine.
	line   []byte
	lastCR bool
	echo   []byte

	// Hand-off between the read goroutine and the shell, under qmu.
	qmu         sync.Mutex
	queue       []string
	interrupt   bool               // a Ctrl-C arrived while the shell was idle
	cancelCmd   context.CancelFunc // cancels the running command, if any
	interrupted bool               // the running command was cancelled by Ctrl-C
	wake        chan struct{}
}

func startSession(b *Board, master, slave *os.File) *session {
	le, _ := lineEndingBytes(b.opts.LineEnding) // checked by Start
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{
		b:      b,
		le:     le,
		master: master,
		slave:  slave,
		ctx:    ctx,
		cancel: cancel,
		wake:   make(chan struct{}, 1),
	}
	s.wg.Add(2)
	go s.readLoop()
	go s.shellLoop()
	return s
}

// stop ends the session: closing the master unblocks the goroutines' reads
// and writes, and closing the slave as well hangs up the client.
func (s *session) stop() error {
	s.cancel()
	var errs []error
	if err := s.master.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close pty master: %w", err))
	}
	if err := s.slave.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close pty slave: %w", err))
	}
	s.wg.Wait()
	return errors.Join(errs...)
}

// write writes p to the master. If ctx ends first, the write is cut short by
// a past deadline and write returns ctx's error.
func (s *session) write(ctx context.Context, p []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		s.master.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	_, err := s.master.Write(p)
	if !stop() {
		<-fired
		s.master.SetWriteDeadline(time.Time{})
		return fmt.Errorf("write to pty: %w", context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("write to pty: %w", err)
	}
	return nil
}

func (s *session) readLoop() {
	defer s.wg.Done()
	if s.b.opts.RealtimeRx && s.readRealtime() {
		return
	}
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			s.input(time.Now(), buf[:n])
		}
		if err != nil {
			// The master was closed by stop; there is nobody to tell.
			return
		}
	}
}

// input handles bytes that arrived at time at: it edits the line, echoes,
// and hands complete lines and Ctrl-C to the shell.
func (s *session) input(at time.Time, p []byte) {
	echo := s.b.opts.Echo
	for _, c := range p {
		switch {
		case c == ctrlC:
			s.line = s.line[:0]
			s.lastCR = false
			s.flushEcho()
			s.ctrlC()
		case c == '\n' && s.lastCR:
			// The second half of "\r\n", which ended the line already.
			s.lastCR = false
		case c == '\r' || c == '\n':
			s.lastCR = c == '\r'
			l := RxLine{At: at, Line: string(s.line)}
			s.line = s.line[:0]
			if echo {
				s.echo = append(s.echo, s.le...)
			}
			s.flushEcho()
			s.b.received(l)
			s.enqueue(l.Line)
		case c == '\b' || c == 0x7f:
			s.lastCR = false
			if len(s.line) > 0 {
				s.line = s.line[:len(s.line)-1]
				if echo {
					s.echo = append(s.echo, "\b \b"...)
				}
			}
		default:
			s.lastCR = false
			if len(s.line) < maxLine {
				s.line = append(s.line, c)
			}
			if echo {
				s.echo = append(s.echo, c)
			}
		}
	}
	s.flushEcho()
}

func (s *session) flushEcho() {
	if len(s.echo) == 0 {
		return
	}
	// An echo the client never reads is not worth stopping input for, and
	// a closed master ends the read loop anyway.
	_ = s.write(s.ctx, s.echo)
	s.echo = s.echo[:0]
}

func (s *session) enqueue(line string) {
	s.qmu.Lock()
	if len(s.queue) < maxQueued {
		s.queue = append(s.queue, line)
	}
	s.qmu.Unlock()
	s.signal()
}

// ctrlC aborts the running command, or makes the idle shell print "^C" and
// the prompt. Either way lines typed ahead are discarded.
func (s *session) ctrlC() {
	s.qmu.Lock()
	s.queue = nil
	if s.cancelCmd != nil {
		s.cancelCmd()
		s.interrupted = true
	} else {
		s.interrupt = true
	}
	s.qmu.Unlock()
	s.signal()
}

func (s *session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// next waits for the shell's next job: a Ctrl-C to acknowledge (intr) or a
// line to run under ctx, which Ctrl-C cancels. ok is false once the session
// ends.
func (s *session) next() (line string, ctx context.Context, intr, ok bool) {
	for {
		if s.ctx.Err() != nil {
			return "", nil, false, false
		}
		s.qmu.Lock()
		if s.interrupt {
			s.interrupt = false
			s.qmu.Unlock()
			return "", nil, true, true
		}
		if len(s.queue) > 0 {
			line = s.queue[0]
			s.queue = s.queue[1:]
			// Set under the same lock as the dequeue, so a Ctrl-C cannot
			// fall between taking the line and it becoming cancellable.
			ctx, s.cancelCmd = context.WithCancel(s.ctx)
			s.interrupted = false
			s.qmu.Unlock()
			return line, ctx, false, true
		}
		s.qmu.Unlock()
		select {
		case <-s.wake:
		case <-s.ctx.Done():
		}
	}
}

// finish ends the running command and reports whether Ctrl-C cut it short.
func (s *session) finish() bool {
	s.qmu.Lock()
	cancel := s.cancelCmd
	s.cancelCmd = nil
	intr := s.interrupted
	s.interrupted = false
	s.qmu.Unlock()
	if cancel != nil {
		cancel()
	}
	return intr
}

func (s *session) shellLoop() {
	defer s.wg.Done()
	var out bytes.Buffer
	s.banner(&out)
	out.WriteString(s.b.opts.Prompt)
	if s.write(s.ctx, out.Bytes()) != nil && s.ctx.Err() != nil {
		return
	}
	for {
		line, ctx, intr, ok := s.next()
		if !ok {
			return
		}
		out.Reset()
		if intr {
			s.println(&out, "^C")
		} else {
			s.run(ctx, line, &out)
			if s.finish() {
				s.println(&out, "^C")
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		out.WriteString(s.b.opts.Prompt)
		// Writes fail for good only once the session ends; otherwise keep
		// serving input, as firmware would after a lost reply.
		if s.write(s.ctx, out.Bytes()) != nil && s.ctx.Err() != nil {
			return
		}
	}
}

// run executes one command line, leaving its reply in out (every line ended)
// or, for stream data, writing it directly. Commands separated by ';' run
// in turn. When Ctrl-C cancels ctx the command stops early; finish reports
// that.
func (s *session) run(ctx context.Context, line string, out *bytes.Buffer) {
	for cmd := range strings.SplitSeq(line, ";") {
		if ctx.Err() != nil {
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

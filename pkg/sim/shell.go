package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
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

// session is one plug-in of the board: a pty pair, the goroutine reading
// input from the master and the goroutine running the shell.
type session struct {
	b      *Board
	idx    int // the console, from 0
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
	notes       []note             // unsolicited output: a reboot, a radio message
	wake        chan struct{}
}

// note is output the shell prints unasked, between commands, followed by
// the prompt: it writes its lines to out.
type note func(s *session, out *bytes.Buffer)

func startSession(b *Board, idx int, master, slave *os.File) *session {
	le, _ := lineEndingBytes(b.opts.LineEnding) // checked by Start
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{
		b:      b,
		idx:    idx,
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
	// A hung firmware neither echoes nor acts on input (see hang.go); the
	// lines still arrive and are logged.
	hung := s.b.hung.Load()
	echo := s.b.opts.Echo && !hung
	for _, c := range p {
		switch {
		case c == ctrlC && hung:
			s.line = s.line[:0]
			s.lastCR = false
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
			l := RxLine{At: at, Line: string(s.line), Console: s.idx}
			s.line = s.line[:0]
			if echo {
				s.echo = append(s.echo, s.le...)
			}
			s.flushEcho()
			s.b.received(l)
			if !hung {
				s.enqueue(l.Line)
			}
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

// notify queues output for the shell to print between commands; beyond
// maxQueued waiting it is dropped, like lines typed ahead.
func (s *session) notify(n note) {
	s.qmu.Lock()
	if len(s.notes) < maxQueued {
		s.notes = append(s.notes, n)
	}
	s.qmu.Unlock()
	s.signal()
}

// next waits for the shell's next job: a Ctrl-C to acknowledge (intr),
// notes to print, or a line to run under ctx, which Ctrl-C cancels. ok is
// false once the session ends.
func (s *session) next() (line string, ctx context.Context, notes []note, intr, ok bool) {
	for {
		if s.ctx.Err() != nil {
			return "", nil, nil, false, false
		}
		s.qmu.Lock()
		if s.interrupt {
			s.interrupt = false
			s.qmu.Unlock()
			return "", nil, nil, true, true
		}
		if len(s.notes) > 0 {
			notes, s.notes = s.notes, nil
			s.qmu.Unlock()
			return "", nil, notes, false, true
		}
		if len(s.queue) > 0 {
			line = s.queue[0]
			s.queue = s.queue[1:]
			// Set under the same lock as the dequeue, so a Ctrl-C cannot
			// fall between taking the line and it becoming cancellable.
			ctx, s.cancelCmd = context.WithCancel(s.ctx)
			s.interrupted = false
			s.qmu.Unlock()
			return line, ctx, nil, false, true
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
		line, ctx, notes, intr, ok := s.next()
		if !ok {
			return
		}
		out.Reset()
		switch {
		case intr:
			s.println(&out, "^C")
		case notes != nil:
			for _, n := range notes {
				n(s, &out)
			}
		default:
			s.run(ctx, line, &out)
			if s.finish() {
				s.println(&out, "^C")
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		if s.b.hung.Load() {
			// What came before the hang leaves; no prompt follows.
			if out.Len() > 0 && s.write(s.ctx, out.Bytes()) != nil && s.ctx.Err() != nil {
				return
			}
			continue
		}
		out.WriteString(s.b.opts.Prompt)
		// Writes fail for good only once the session ends; otherwise keep
		// serving input, as firmware would after a lost reply.
		if s.write(s.ctx, out.Bytes()) != nil && s.ctx.Err() != nil {
			return
		}
	}
}

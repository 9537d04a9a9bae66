package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ignoreBrokenPipes makes a write to a closed standard output or error
// fail with EPIPE instead of killing hilrun with SIGPIPE (as Go does for
// descriptors 1 and 2 by default): `hilrun run ... | head` must still run
// finally steps, write its reports and remove its temporary folders. The
// signal is caught, not ignored, so the programs hilrun starts get the
// default disposition back when they exec.
func ignoreBrokenPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// phase is where hilrun run stands, for what a signal does and says.
type phase int

const (
	phaseStart   phase = iota // loading, starting the virtual board
	phaseRun                  // sequences and their finally steps run
	phaseReports              // the run is over; the reports are written
)

// interrupts handles SIGINT and SIGTERM for hilrun run from its first
// moment to its exit. The first signal cancels Run: the current step stops
// and finally steps run under Fin. The second cancels Fin: finally steps
// are cut short. The reports are written even so; a signal while they are
// written, other than the first of all, abandons them.
type interrupts struct {
	Run, Fin context.Context
	rep      context.Context // bounds the writing of the reports

	errOut        io.Writer
	cancelRun     context.CancelFunc
	cancelFin     context.CancelFunc
	cancelReports context.CancelFunc
	sigs          chan os.Signal
	done          chan struct{}

	mu    sync.Mutex
	phase phase
	seen  int
	// flush, when set, writes what the progress console holds, before a
	// signal's line: the line comes after the steps it interrupted.
	flush func()
}

// errAbandoned is returned by interrupts.reports when a signal abandoned
// the reports.
var errAbandoned = errors.New("reports abandoned after a second signal")

func catchInterrupts(parent context.Context, errOut io.Writer) *interrupts {
	in := &interrupts{errOut: errOut, sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	in.Run, in.cancelRun = context.WithCancel(parent)
	in.Fin, in.cancelFin = context.WithCancel(context.WithoutCancel(parent))
	in.rep, in.cancelReports = context.WithCancel(context.WithoutCancel(parent))
	signal.Notify(in.sigs, os.Interrupt, syscall.SIGTERM)
	go in.loop()
	return in
}

func (in *interrupts) loop() {
	for {
		select {
		case <-in.done:
			return
		case s := <-in.sigs:
			in.mu.Lock()
			in.seen++
			n, ph, flush := in.seen, in.phase, in.flush
			in.mu.Unlock()
			if flush != nil {
				flushBounded(flush)
			}
			name := strings.ToLower(s.String())
			switch {
			case n == 1 && ph == phaseStart:
				fmt.Fprintf(in.errOut, "\nhilrun: %s: stopping before the run starts\n", name)
				in.cancelRun()
			case n == 1 && ph == phaseRun:
				fmt.Fprintf(in.errOut, "\nhilrun: %s: stopping; finally steps run (signal again to skip them)\n", name)
				in.cancelRun()
			case n == 1:
				fmt.Fprintf(in.errOut, "\nhilrun: %s: the run is over; finishing its reports (signal again to abandon them)\n", name)
				in.cancelRun()
			case ph == phaseReports:
				fmt.Fprintf(in.errOut, "hilrun: %s again: abandoning the reports\n", name)
				in.cancelReports()
			default:
				fmt.Fprintf(in.errOut, "hilrun: %s again: cutting finally steps short; the reports are still written (signal again while they are to abandon them)\n", name)
				in.cancelRun()
				in.cancelFin()
			}
		}
	}
}

// flushBounded calls flush and waits for it at most abandonGrace: a
// write to a terminal or a pipe that does not read (a paused terminal, a
// CI log reader that stopped) must not hold a signal back, or the run
// would never stop. A flush still under way then finishes by itself.
func flushBounded(flush func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		flush()
	}()
	t := time.NewTimer(abandonGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// flushFirst has flush called before each signal's line.
func (in *interrupts) flushFirst(flush func()) {
	in.mu.Lock()
	in.flush = flush
	in.mu.Unlock()
}

func (in *interrupts) enter(ph phase) {
	in.mu.Lock()
	in.phase = ph
	in.mu.Unlock()
}

// abandonGrace is how long abandoned reports get to stop writing and
// remove their temporary files.
const abandonGrace = time.Second

// reports runs write, the writing of the reports, unless a signal (not
// the first of all) comes first: then write's context ends, so that a report being written
// to a file stops at its next write and removes its temporary file, and
// reports returns errAbandoned once it did, or after abandonGrace (a write
// to a pipe nobody reads cannot be interrupted: the process exit ends it).
func (in *interrupts) reports(write func(ctx context.Context) error) error {
	in.enter(phaseReports)
	done := make(chan error, 1)
	go func() { done <- write(in.rep) }()
	select {
	case err := <-done:
		return err
	case <-in.rep.Done():
	}
	t := time.NewTimer(abandonGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	return errAbandoned
}

// stop stops catching signals; later ones act as if hilrun caught none.
func (in *interrupts) stop() {
	signal.Stop(in.sigs)
	close(in.done)
	in.cancelRun()
	in.cancelFin()
	in.cancelReports()
}

// ctxWriter fails every write once ctx is done, so that a report being
// written to a file stops when it is abandoned.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

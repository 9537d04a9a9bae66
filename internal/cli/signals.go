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
// are cut short, and reports still being written are abandoned.
type interrupts struct {
	Run, Fin context.Context

	errOut    io.Writer
	cancelRun context.CancelFunc
	cancelFin context.CancelFunc
	sigs      chan os.Signal
	done      chan struct{}

	mu    sync.Mutex
	phase phase
	seen  int
}

// errAbandoned is returned by interrupts.reports when a second signal
// abandoned the reports.
var errAbandoned = errors.New("reports abandoned after a second signal")

func catchInterrupts(parent context.Context, errOut io.Writer) *interrupts {
	in := &interrupts{errOut: errOut, sigs: make(chan os.Signal, 2), done: make(chan struct{})}
	in.Run, in.cancelRun = context.WithCancel(parent)
	in.Fin, in.cancelFin = context.WithCancel(context.WithoutCancel(parent))
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
			n, ph := in.seen, in.phase
			in.mu.Unlock()
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
			default:
				if ph != phaseReports {
					fmt.Fprintf(in.errOut, "hilrun: %s again: cutting finally steps short\n", name)
				}
				in.cancelRun()
				in.cancelFin()
			}
		}
	}
}

func (in *interrupts) enter(ph phase) {
	in.mu.Lock()
	in.phase = ph
	in.mu.Unlock()
}

// reports runs write, the writing of the reports, unless a second signal
// comes first: then it returns errAbandoned at once, leaving write to be
// ended by the process exit (a write to a pipe nobody reads cannot be
// interrupted).
func (in *interrupts) reports(write func(ctx context.Context) error) error {
	in.enter(phaseReports)
	done := make(chan error, 1)
	go func() { done <- write(in.Fin) }()
	select {
	case err := <-done:
		return err
	case <-in.Fin.Done():
		return errAbandoned
	}
}

// stop stops catching signals; later ones act as if hilrun caught none.
func (in *interrupts) stop() {
	signal.Stop(in.sigs)
	close(in.done)
	in.cancelRun()
	in.cancelFin()
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

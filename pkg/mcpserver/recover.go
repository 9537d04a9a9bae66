package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The server's own bench (its --bench file) may carry a health check and a
// recovery ladder (health:, recover:). Before each sequence a call runs on
// that bench (serial_sequence, and run_sequence without a bench of its
// own), the server runs the health check; when it fails, or when the call
// before ended in a bench error, it climbs the ladder. The call's result
// carries the climb under "recovery". A bench whose climb fails is bad:
// the server runs no sequence on it, and says why, until its health check
// passes again (recheck.go).
//
// The ladder's steps are the operator's, from the --bench file: a client
// can neither give nor change them, and they pass through the same
// binding and policy checks as a client's steps (bindPlan, checkPlan),
// when the server starts (a step the policy refuses refuses the server)
// and at every climb. A ladder in a bench file a client names is not run.

// benchLadder is the state of the server's bench's ladder.
type benchLadder struct {
	// mu guards the fields; a climb itself holds the lock ladderKey
	// names, so that a call that finds it held can be told busy.
	mu sync.Mutex
	// after names the sequence of the call that ended in a bench error:
	// the next call climbs the ladder before it runs.
	after string
	// bad says why the bench is bad; "" while it is not. checked is
	// when its health check last ran since it went bad.
	bad     string
	checked time.Time
	// runs counts the ladder's runs, for their log folders.
	runs int
}

// ErrBadBench is wrapped by the error of a call refused because the
// server's bench is bad.
var ErrBadBench = errors.New("the server's bench is bad")

// checkLadder binds and checks the ladder of the server's bench, as any
// sequence a client sends is bound and checked, before the server serves.
func (s *Server) checkLadder() error {
	b := s.cfg.Bench
	if b == nil || b.Ladder == nil || b.Ladder.Health == nil {
		return nil
	}
	if _, _, err := s.bindLadder(); err != nil {
		return fmt.Errorf("the --bench file %s: %w", b.File, err)
	}
	s.ladder = &benchLadder{}
	return nil
}

// bindLadder binds the server's bench's ladder through bindPlan and
// checkPlan, and returns it with the locks each of its plans needs.
func (s *Server) bindLadder() (*plan.Ladder, map[*plan.Plan][]string, error) {
	keys := map[*plan.Plan][]string{}
	l, err := plan.BindLadder(s.cfg.Bench.File, s.cfg.Bench.Ladder, func(seq *steps.Sequence) (*plan.Plan, error) {
		pl, k, err := s.bindPlan(seq, execOptions{})
		if err != nil {
			return nil, err
		}
		// The ladder talks to the server's own board as its bench file
		// says: a device without a port is the server's default port
		// (--sim, --port), never a client's connection that merely
		// carries the device's name as its label, and through a
		// client's connection to that port it sends with the bench's
		// line ending, not the connection's (a client's line_ending
		// none, or its silent port, must not make the bench bad).
		if pl, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
			for _, d := range seq.Devices {
				if d.Port == "" && d.USB == nil && s.cfg.DefaultPort != "" {
					d.Port, d.Implicit = s.cfg.DefaultPort, false
					if d.PortFrom == "" {
						d.PortFrom = "hilrun mcp's --sim or --port"
					}
				}
				if d.LineEnding == "" {
					d.LineEnding = "lf"
				}
			}
			return seq, nil
		}); err != nil {
			return nil, err
		}
		if err := s.checkPlan(pl, nil); err != nil {
			return nil, err
		}
		keys[pl] = k
		return pl, nil
	})
	return l, keys, err
}

// beforeSequence runs the server's bench's health check before the
// sequence seq of a call, climbing the ladder when it fails or when the
// call before ended in a bench error; it returns the climb, nil when none
// ran. An error wrapping ErrBadBench means the bench is bad (now or
// before) and the call must not run.
func (s *Server) beforeSequence(ctx context.Context, req mcp.CallToolRequest, seq *steps.Sequence, wait time.Duration) (*results.Recovery, error) {
	bl := s.ladder
	if bad, due, next := bl.recheckDue(time.Now()); bad != "" && !due {
		return nil, badBench(seq.Name, bad, next)
	}
	// One call at a time checks the bench: another is busy, as it would
	// be on a held port, or waits up to its lock_timeout_ms, and its
	// client can cancel it while it waits.
	release, err := s.locks.acquire(ctx, []string{ladderKey(s.cfg.Bench.File)}, who(ctx, req), wait)
	if err != nil {
		return nil, fmt.Errorf("%s did not run: %w", seq.Name, err)
	}
	defer release()
	l, keys, err := s.bindLadder()
	if err != nil {
		return nil, err
	}
	bad, due, next := bl.recheckDue(time.Now())
	bl.mu.Lock()
	after := bl.after
	bl.mu.Unlock()
	switch {
	case bad != "" && !due: // another call checked it meanwhile
		return nil, badBench(seq.Name, bad, next)
	case bad != "":
		return nil, s.recheck(ctx, req, seq.Name, l, keys, wait)
	}
	// A run of the ladder that finds the bench's ports busy (another call
	// or session holds them) ends the climb: the bench was not checked,
	// so it is not bad, and the next call climbs again.
	climbCtx, run, busy, stop := s.stoppableLadderRun(ctx, req, keys, wait)
	defer stop()
	var rec *results.Recovery
	if after != "" {
		rec = l.After(climbCtx, run, after)
	} else {
		rec = l.Before(climbCtx, run, seq.Name)
	}
	if *busy != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%s did not run: the server's bench's health check and ladder could not take its ports: %w", seq.Name, *busy)
	}
	if rec != nil {
		rec.Redact(s.cfg.Secrets)
	}
	if rec != nil && !rec.Recovered && (rec.Interrupted || ctx.Err() != nil) {
		return rec, fmt.Errorf("%s did not run: the call ended while the server's bench was recovering: %s", seq.Name, rec.Outcome())
	}
	bl.mu.Lock()
	defer bl.mu.Unlock()
	if bl.after == after {
		bl.after = ""
	}
	if rec == nil || rec.Recovered {
		return rec, nil
	}
	bl.bad, bl.checked = rec.BadReason(), time.Now()
	s.logf("bench %s is bad: %s", rec.Bench, bl.bad)
	return rec, fmt.Errorf("%s did not run: %w: %s (%s); a call from %s runs its health check again", seq.Name, ErrBadBench, bl.bad, rec.Outcome(), checkTime(bl.checked.Add(recheckEvery)))
}

// ladderKey is the lock a call takes while it checks the server's bench
// file and climbs its ladder.
func ladderKey(file string) string { return "bench " + file }

// badReason says why the bench is bad, "" while it is not.
func (bl *benchLadder) badReason() string {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return bl.bad
}

// afterSequence notes a call whose sequence ended in a bench error: the
// next call climbs the ladder first.
func (s *Server) afterSequence(seq *steps.Sequence, res *runner.SequenceResult) {
	if res == nil || res.Status != runner.Errored {
		return
	}
	s.ladder.mu.Lock()
	s.ladder.after = seq.Name
	s.ladder.mu.Unlock()
}

// stoppableLadderRun is ladderRun for the runs of one call: the first
// that finds the bench's ports busy sets *busy and ends runCtx, so the
// runs after it end at once.
func (s *Server) stoppableLadderRun(ctx context.Context, req mcp.CallToolRequest, keys map[*plan.Plan][]string, wait time.Duration) (runCtx context.Context, run plan.RunFunc, busy *error, stop func()) {
	runCtx, stop = context.WithCancel(ctx)
	busy = new(error)
	run = s.ladderRun(req, s.ladder, keys, wait, func(err error) {
		*busy = err
		stop()
	})
	return runCtx, run, busy, stop
}

// ladderRun runs one plan of the ladder as a call's sequence runs, with
// its ports and locks taken, on the server's bench; its logs go to a
// folder of the server's log folder that no resource names.
// A run that finds its ports or locks busy (held by another call or
// session) calls busy with why, and runs nothing.
func (s *Server) ladderRun(req mcp.CallToolRequest, bl *benchLadder, keys map[*plan.Plan][]string, wait time.Duration, busy func(error)) plan.RunFunc {
	return func(ctx context.Context, pl *plan.Plan, what string) *runner.SequenceResult {
		failed := func(err error) *runner.SequenceResult {
			return &runner.SequenceResult{Name: pl.Sequence().Name, File: pl.Sequence().File, Status: runner.Errored, Error: err.Error(), StartedAt: time.Now()}
		}
		ready, plans, release, err := s.takePorts(ctx, req, pl, keys[pl], wait)
		if err != nil {
			if errors.Is(err, ErrBusy) {
				busy(err)
			}
			return failed(err)
		}
		defer release()
		// A connection released for hand-over (console_release) is
		// another program's until console_hold: the board cannot be
		// checked through it, which says nothing of the board.
		for _, name := range slices.Sorted(maps.Keys(plans)) {
			if c := plans[name].conn; c != nil && c.console.Stats().Released {
				err := fmt.Errorf("%w: device %s: connection %s (%s) is released for hand-over (console_release); console_hold takes it back", ErrBusy, name, c.id, c.port)
				busy(err)
				return failed(err)
			}
		}
		bl.mu.Lock()
		bl.runs++
		dir := filepath.Join(s.logDir, "bench", fmt.Sprintf("%d-%s", bl.runs, what))
		bl.mu.Unlock()
		if err := s.own.MkdirAll(dir, 0o777); err != nil {
			return failed(err)
		}
		var probeGone atomic.Bool
		bench := s.runBench(dir, plans, execOptions{}, &progress{}, func() { probeGone.Store(true) })
		res := ready.Run(ctx, bench, plan.Output{ArtifactDir: filepath.Join(dir, artifactDir), KeepSteps: true})
		if probeGone.Load() {
			for _, p := range ready.Sequence().Probes {
				s.dropSession(p)
			}
		}
		return res
	}
}

// recoveryText is a climb in the words of the result's text, a line for
// it and one per rung: "" for none.
func recoveryText(r *results.Recovery) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bench %s: %s: %s\n", r.Bench, r.Why(), r.Outcome())
	for _, g := range r.Rungs {
		fmt.Fprintf(&b, "  rung %d %s: %s; health check %s", g.Index, g.Label, g.Status, g.Health.Status)
		if !g.Worked() && g.Health.Message != "" {
			fmt.Fprintf(&b, ": %s", g.Health.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

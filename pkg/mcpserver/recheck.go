package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// A bad bench is not given up for good: someone may mend the board (a
// power cycle by hand, a cable plugged back) while the server runs. A
// call on a bad bench runs its health check again, and nothing of its
// ladder, when recheckEvery has passed since the last check; a pass makes
// the bench good and the call runs. Calls in between are refused at once.

// recheckEvery is how often, at most, a bad bench's health check runs
// again.
const recheckEvery = 30 * time.Second

// badBench is the refusal of a call on a bad bench; why is the bench's
// reason, with its last check's outcome when it was checked again.
func badBench(seqName, why string, next time.Time) error {
	return fmt.Errorf("%s did not run: %w: %s; a call from %s runs its health check again, and the bench takes work once it passes", seqName, ErrBadBench, why, checkTime(next))
}

// checkTime is when the next check is due, to the second, rounded up so
// that a call at that time finds it due.
func checkTime(next time.Time) string {
	return next.Add(time.Second - time.Nanosecond).Format(time.RFC3339)
}

// recheckDue reports why the bench is bad ("" when it is not), whether a
// call now runs its health check again, and when the next check is due.
func (bl *benchLadder) recheckDue(now time.Time) (bad string, due bool, next time.Time) {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	next = bl.checked.Add(recheckEvery)
	return bl.bad, bl.bad != "" && !now.Before(next), next
}

// recheck runs the bad bench's health check again for the call of
// seqName: nil when it passed (the bench is good again and the call
// runs), else the call's refusal.
func (s *Server) recheck(ctx context.Context, req mcp.CallToolRequest, seqName string, l *plan.Ladder, keys map[*plan.Plan][]string, wait time.Duration) error {
	bl := s.ladder
	// A check begun counts, whatever ends it (a client that cancels
	// its call does not make the next one due), but one that found the
	// ports busy, which touched nothing. The caller holds the bench's
	// lock, so no other check runs meanwhile.
	bl.mu.Lock()
	before := bl.checked
	bl.checked = time.Now()
	bl.mu.Unlock()
	checkCtx, run, busy, stop := s.stoppableLadderRun(ctx, req, keys, wait)
	defer stop()
	res := run(checkCtx, l.Plans()[0], "recheck")
	bl.mu.Lock()
	defer bl.mu.Unlock()
	if *busy != nil && ctx.Err() == nil {
		bl.checked = before
		return fmt.Errorf("%s did not run: the server's bad bench's health check could not take its ports: %w", seqName, *busy)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not run: the call ended while the server's bad bench's health check ran again", seqName)
	}
	bl.checked = time.Now()
	if res.Status == runner.Passed {
		s.logf("bench %s is good again: its health check passed (it was bad: %s)", l.Bench(), bl.bad)
		bl.bad, bl.after = "", ""
		return nil
	}
	check := results.CheckFrom(res)
	why := fmt.Sprintf("%s; its health check ran again at %s and %s: %s", bl.bad, bl.checked.Format(time.RFC3339), check.Status, s.cfg.Secrets.String(check.Message))
	return badBench(seqName, why, bl.checked.Add(recheckEvery))
}

package runner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// barrierLead is how far ahead of the last arrival a barrier sets the
// time its branches leave it. Each branch then waits for that time as a
// delay does (see sleepTimed), so they leave together however late the
// scheduler woke each one from the barrier, as long as it woke within
// the lead; BENCHMARKS.md (u) measures the skew it leaves.
const barrierLead = 500 * time.Microsecond

// block is one run of a parallel: step: what its branches share, the
// cancellation and the barriers. Its methods are safe for concurrent
// use.
type block struct {
	mu sync.Mutex
	// stopped is closed when a branch's failure cancels the others; by
	// names that branch and reason says why.
	stopped chan struct{}
	by      string
	reason  string
	// left names the branches that ended.
	left     map[string]bool
	barriers map[string]*barrier
}

// barrier is one barrier of a block.
type barrier struct {
	name string
	// parts are the branches that name it, in the order written.
	parts []string
	// arrived counts each branch's arrivals; gens are the crossings not
	// every branch has passed yet, by index (0 is the first).
	arrived map[string]int
	gens    map[int]*generation
	// skipped are, by branch, the crossings it does not make, as its
	// barrier step (or a repeat around it) was skipped: each breaks the
	// crossing for the others.
	skipped map[string][]skippedSpan
}

// skippedSpan is crossings [from, to) of one branch, skipped for why.
type skippedSpan struct {
	from, to int
	why      string
}

// generation is one crossing of a barrier by all its branches.
type generation struct {
	done chan struct{} // closed once released or broken
	// at is when the branches leave, once the last arrived; err why
	// they do not (a timeout, a branch that ended without arriving).
	at  time.Time
	err error
}

// newBlock makes the block of parallel step s, with the branches each
// of its barriers waits for.
func newBlock(s *steps.Step) *block {
	b := &block{stopped: make(chan struct{}), left: map[string]bool{}, barriers: map[string]*barrier{}}
	for _, br := range s.Steps {
		walkBarriers(br.Steps, func(name string) {
			bar := b.barriers[name]
			if bar == nil {
				bar = &barrier{name: name, arrived: map[string]int{}, gens: map[int]*generation{}, skipped: map[string][]skippedSpan{}}
				b.barriers[name] = bar
			}
			if !slices.Contains(bar.parts, br.Name) {
				bar.parts = append(bar.parts, br.Name)
			}
		})
	}
	return b
}

func walkBarriers(ss []*steps.Step, fn func(string)) {
	for _, s := range ss {
		if name := steps.BarrierName(s); name != "" {
			fn(name)
		}
		walkBarriers(s.Steps, fn)
	}
}

// cancel stops the branches of the block other than by, for reason,
// unless an earlier failure did.
func (b *block) cancel(by, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by != "" {
		return
	}
	b.by, b.reason = by, reason
	close(b.stopped)
}

// cancelledFor says why branch name must stop: another branch's
// failure; "" when none, or when name is the branch that failed.
func (b *block) cancelledFor(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == "" || b.by == name {
		return ""
	}
	return b.reason
}

// why is the reason of the block's cancellation, "" when none.
func (b *block) why() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason
}

// leave records that branch name ended: the crossings it has not made
// are broken for the branches waiting at them, or arriving later.
func (b *block) leave(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left[name] = true
	for _, bar := range b.barriers {
		if !slices.Contains(bar.parts, name) {
			continue
		}
		for k, g := range bar.gens {
			if bar.arrived[name] <= k {
				g.fail(fmt.Errorf("barrier %s: branch %s ended without reaching it", bar.name, name))
			}
		}
	}
}

// fail breaks g for err, unless it was released or broken already.
func (g *generation) fail(err error) {
	if g.at.IsZero() && g.err == nil {
		g.err = err
		close(g.done)
	}
}

// gen returns crossing k of bar, made when first needed.
func (bar *barrier) gen(k int) *generation {
	g := bar.gens[k]
	if g == nil {
		g = &generation{done: make(chan struct{})}
		bar.gens[k] = g
	}
	return g
}

// errCancelled ends a barrier wait whose block a branch's failure
// cancelled; the wait is reported skipped, with the reason.
type errCancelled struct{ reason string }

func (e *errCancelled) Error() string { return e.reason }

// arrive counts branch name's next arrival at barrier name and returns
// the crossing it waits for, releasing it when name was the last to
// arrive.
func (b *block) arrive(barName, name string) (*generation, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by != "" && b.by != name {
		return nil, 0, &errCancelled{b.reason}
	}
	bar := b.barriers[barName]
	if bar == nil {
		return nil, 0, fmt.Errorf("barrier %s is not named by the branches of this parallel: step", barName)
	}
	k := bar.arrived[name]
	bar.arrived[name] = k + 1
	g := bar.gen(k)
	for _, p := range bar.parts {
		switch why, skipped := bar.skippedAt(p, k); {
		case skipped:
			g.fail(b.skipErr(barName, p, why))
		case b.left[p] && bar.arrived[p] <= k:
			g.fail(fmt.Errorf("barrier %s: branch %s ended without reaching it", barName, p))
		}
	}
	if g.err == nil && g.at.IsZero() && bar.all(k) {
		g.at = time.Now().Add(barrierLead)
		close(g.done)
	}
	// Crossings every branch has passed (or never will) are not looked
	// up again.
	for i := range bar.gens {
		if i < k && !slices.ContainsFunc(bar.parts, func(p string) bool { return !b.left[p] && bar.arrived[p] <= i }) {
			delete(bar.gens, i)
		}
	}
	return g, k, nil
}

// absent counts n crossings of barrier barName that branch name does not
// make, as its barrier step was skipped for why (n times, in a repeat):
// each breaks for the others at once, those they wait at now and those
// they reach later.
func (b *block) absent(barName, name string, n uint64, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bar := b.barriers[barName]
	if bar == nil || n == 0 {
		return
	}
	k := bar.arrived[name]
	to := k + int(min(n, uint64(math.MaxInt-k)))
	bar.arrived[name] = to
	if sp := bar.skipped[name]; len(sp) > 0 && sp[len(sp)-1].to == k && sp[len(sp)-1].why == why {
		sp[len(sp)-1].to = to // one span for a skipped step in a repeat
	} else {
		bar.skipped[name] = append(sp, skippedSpan{k, to, why})
	}
	for i, g := range bar.gens {
		if i >= k && i < to {
			g.fail(b.skipErr(barName, name, why))
		}
	}
}

// skipErr is why a crossing broke for branch name's skipped barrier
// step; after a failure that cancelled the block, wait tells the
// cancellation instead.
func (b *block) skipErr(barName, name, why string) error {
	return fmt.Errorf("barrier %s: branch %s did not run its barrier step (%s)", barName, name, why)
}

// skippedAt says whether branch p skipped crossing k of bar, and why.
func (bar *barrier) skippedAt(p string, k int) (string, bool) {
	for _, sp := range bar.skipped[p] {
		if k >= sp.from && k < sp.to {
			return sp.why, true
		}
	}
	return "", false
}

// all reports whether every branch of bar arrived for crossing k.
func (bar *barrier) all(k int) bool {
	for _, p := range bar.parts {
		if bar.arrived[p] <= k {
			return false
		}
	}
	return true
}

// wait waits at barrier barName for crossing g (the k-th arrival of
// branch name) to be released, at most timeout; it returns the time the
// branches leave. A timeout breaks the crossing for every branch waiting
// at it, with a message naming the branches that did not arrive.
func (b *block) wait(ctx context.Context, barName, name string, g *generation, k int, timeout time.Duration) (time.Time, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	stopped := b.stopped
	if b.cancelledFor(name) == "" && b.why() != "" {
		stopped = nil // this branch's own failure: it waits on
	}
	select {
	case <-g.done:
	default:
		stream.Idle(ctx)
	}
	select {
	case <-g.done:
	case <-stopped:
	case <-ctx.Done():
	case <-timer.C:
		b.mu.Lock()
		bar := b.barriers[barName]
		var in, out []string
		for _, p := range bar.parts {
			if bar.arrived[p] > k {
				in = append(in, p)
			} else {
				out = append(out, p)
			}
		}
		g.fail(fmt.Errorf("barrier %s: timed out after %s waiting for %s %s (arrived: %s)", barName, timeout,
			plural(len(out), "branch", "branches"), strings.Join(out, ", "), strings.Join(in, ", ")))
		b.mu.Unlock()
	}
	if ctx.Err() != nil {
		// An interrupt ends the wait, even when the crossing was
		// released or the block cancelled at the same moment.
		return time.Time{}, context.Cause(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A failure that cancelled the block says why better than the
	// crossing it broke on its way (its branch skipping the barrier).
	switch {
	case !g.at.IsZero():
		return g.at, nil
	case b.by != "" && b.by != name:
		return time.Time{}, &errCancelled{b.reason}
	case g.err != nil:
		return time.Time{}, g.err
	}
	return time.Time{}, context.Cause(ctx)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

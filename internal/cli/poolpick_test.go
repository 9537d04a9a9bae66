package cli

import (
	"context"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// A worker takes the free bench taken least recently, one never taken
// first: a bench let go early is not taken again while another has run
// nothing, so with as many benches as sequences each runs on its own,
// whichever worker gets there first.
func TestAcquireTakesTheLeastRecentlyUsedBench(t *testing.T) {
	p := &poolRun{lockDir: t.TempDir(), changed: make(chan struct{})}
	for _, name := range []string{"b1", "b2", "b3"} {
		// Virtual boards: no ports, so no lock files to take.
		p.benches = append(p.benches, &poolBench{PoolBench: &steps.PoolBench{Name: name}})
	}
	ctx := context.Background()
	var got []string
	take := func() (*poolBench, *benchLock) {
		t.Helper()
		b, lock, err := p.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Name)
		return b, lock
	}
	a, la := take()
	p.release(a, la) // done before the others start
	b, lb := take()  // not the bench let go early
	c, lc := take()
	p.release(c, lc)
	p.release(b, lb)
	take() // the least recently taken: b1
	take() // then b2, though b3 was let go last
	want := []string{"b1", "b2", "b3", "b1", "b2"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("benches taken %v, want %v", got, want)
		}
	}
}

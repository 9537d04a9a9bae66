package serialx_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/serialx"
)

// A pool run holds its bench's port with an expiry it renews while it
// runs; an MCP session that asks meanwhile is told who has it. When the
// run ends (or is killed and stops renewing) the port is free again.
func ExampleLeases() {
	ls := serialx.NewLeases()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ls.Now = func() time.Time { return now } // a clock the example moves
	ctx := context.Background()
	port := "/dev/ttyACM0" // serialx.LeaseKey(path) resolves symbolic links

	ls.Hold(ctx, port, "pool run 3", serialx.LeaseOptions{TTL: 30 * time.Second, Note: "bench b1"})
	fmt.Println(ls.Check(port, "session A"))

	now = now.Add(30 * time.Second) // the run was killed: nobody renewed
	fmt.Println(ls.Check(port, "session A"))

	// A session gives the port to a flasher and keeps the right to take
	// it back (ReleaseConsole and HoldConsole also close and reopen its
	// console); its end drops the lease.
	l, _ := ls.Release(ctx, port, "session A", serialx.LeaseOptions{})
	fmt.Println(l.State, l.Owner)
	fmt.Println(len(ls.DropOwner("session A")), ls.Check(port, "session B"))
	// Output:
	// /dev/ttyACM0 is held by pool run 3 since 03:04:05.000 (bench b1); the lease lapses at 03:04:35.000 unless renewed
	// <nil>
	// released session A
	// 1 <nil>
}

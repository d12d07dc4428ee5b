package luarelease_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// maxLockUnlockAllocs is what an uncontended Lock+Unlock may allocate in
// this process: the bound is the raw SET NX PX + EVALSHA pair's
// allocations plus 10 (lockcompare's SPEED rows count the loop's own
// too). A change that adds one shows here before it shows in a benchmark.
const maxLockUnlockAllocs = 21

// TestLockUnlockAllocs: an uncontended Lock+Unlock allocates at most
// maxLockUnlockAllocs times (raceAllocs more under the race detector), its
// connection, script and reply included.
func TestLockUnlockAllocs(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	l := newLocker(t, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	ctx := context.Background()
	var err error
	allocs := testing.AllocsPerRun(200, func() {
		var lease strategy.Lease
		if lease, err = l.Lock(ctx, "allocs"); err == nil {
			err = lease.Unlock(ctx)
		}
	})
	if err != nil {
		t.Fatalf("Lock+Unlock = %v, want nil", err)
	}
	if want := maxLockUnlockAllocs + raceAllocs; allocs > float64(want) {
		t.Errorf("allocations per Lock+Unlock = %.1f, want at most %d", allocs, want)
	}
	t.Logf("allocations per Lock+Unlock: %.1f", allocs)
}

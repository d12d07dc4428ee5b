package luarelease_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestConcurrentCallsShareAConnection: the scripts of a Locker's
// concurrent Lock and Unlock calls travel on a shared connection
// (engine.Pipeline), so the Locker takes far fewer connections from its
// pool than it runs scripts, and every call still gets its own reply:
// every Lock holds its own key with a fencing token above the last one
// its goroutine saw, and every Unlock releases it.
func TestConcurrentCallsShareAConnection(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	l := newLocker(t, pool, strategy.Config{TTL: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const workers, pairs = 16, 100
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Sprint("shared:", w)
			var last uint64
			for range pairs {
				lease, err := l.Lock(ctx, key)
				if err != nil {
					errs <- fmt.Errorf("Lock(%q) = %v, want nil", key, err)
					return
				}
				if lease.Key() != key || lease.Fence() <= last {
					errs <- fmt.Errorf("Lock(%q) = a lease of %q with fence %d, want %q with a fence above %d", key, lease.Key(), lease.Fence(), key, last)
				}
				last = lease.Fence()
				if err := lease.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("Unlock(%q) = %v, want nil", key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	scripts := int64(2 * workers * pairs)
	if gets := pool.Gets(); gets >= scripts/2 {
		t.Errorf("connections taken from the pool = %d for %d scripts, want fewer than %d (shared)", gets, scripts, scripts/2)
	}
	locktest.AssertReleased(t, node, "*shared:*", 10*time.Second)
}

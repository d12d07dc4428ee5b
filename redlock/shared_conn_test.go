package redlock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestNodeCallsShareAConnection: the node calls of a Locker's concurrent
// Lock and Unlock calls travel on one shared connection per node
// (engine.Pipeline), the restart guard's CLIENT GETNAME with each, so the
// Locker takes far fewer connections from each node's pool than it makes
// calls to that node, and every call still gets its own reply: every Lock
// holds its own key with a fencing token above the last one its goroutine
// saw, and every Unlock releases it, with nothing left on any node.
func TestNodeCallsShareAConnection(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	pools := make([]*locktest.FaultyPool, len(nodes))
	ps := make([]strategy.Pool, len(nodes))
	for i, n := range nodes {
		pools[i] = locktest.NewFaultyPool(n.Pool())
		ps[i] = pools[i]
	}
	l, err := redlock.New(ps, redlock.Config{Config: strategy.Config{TTL: 10 * time.Second}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const workers, pairs = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		key := fmt.Sprint("shared:", w)
		wg.Go(func() {
			var last uint64
			for range pairs {
				lease, err := l.Lock(ctx, key)
				if err != nil {
					errs <- fmt.Errorf("Lock(%q) = %v, want nil", key, err)
					return
				}
				if lease.Key() != key || lease.Fence() <= last {
					errs <- fmt.Errorf("Lock(%q) = a lease of %q with fence %d, want %q with a fence above %d", key, lease.Key(), lease.Fence(), key, last)
					return
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
	waitIdle(t, l)
	calls := int64(2 * workers * pairs) // per node: one acquire and one release per pair
	for i, p := range pools {
		if gets := p.Gets(); gets >= calls/2 {
			t.Errorf("node %d: connections taken from the pool = %d for %d calls, want fewer than %d (shared)", i, gets, calls, calls/2)
		}
	}
	for _, n := range nodes {
		locktest.AssertReleased(t, n, "*shared:*", 10*time.Second)
	}
}

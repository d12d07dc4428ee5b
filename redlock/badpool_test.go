package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestBadPoolIsANodeFailure: one node of three has a Pool that returns no
// connection (nil, nil) or a connection whose every method panics, from
// the first call or only once the lock is held. That node fails, and
// nothing crashes the process from a node's goroutine: the other two still
// make a quorum to lock, extend and unlock; with two bad nodes every call
// fails with an error.
func TestBadPoolIsANodeFailure(t *testing.T) {
	faults := []struct {
		name  string
		fault locktest.PoolFault
	}{
		{"nil connection", locktest.PoolNilConn},
		{"panicking connection", locktest.PoolPanics},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			nodes := startNodes(t, 3)
			pools := make([]strategy.Pool, len(nodes))
			bad := make([]*locktest.FaultyPool, len(nodes))
			for i, n := range nodes {
				bad[i] = locktest.NewFaultyPool(n.Pool())
				pools[i] = bad[i]
			}
			l, err := redlock.New(pools, redlock.Config{NodeTimeout: patient})
			if err != nil {
				t.Fatalf("New() = %v, want nil", err)
			}
			locktest.CloseOnCleanup(t, l)
			t.Cleanup(func() { waitIdle(t, l) })

			held := mustLock(t, l, "held")
			waitIdle(t, l)      // the node the decision did not wait for holds it too
			bad[0].Set(f.fault) // once held: Extend and Unlock meet it
			if err := held.Extend(ctx, 5*time.Second); err != nil {
				t.Errorf("Extend() with one bad node = %v, want nil", err)
			}
			if err := held.Unlock(ctx); err != nil {
				t.Errorf("Unlock() with one bad node = %v, want nil", err)
			}
			lease := mustLock(t, l, "k") // from the first call
			if err := lease.Unlock(ctx); err != nil {
				t.Errorf("Unlock() with one bad node = %v, want nil", err)
			}

			bad[1].Set(f.fault)
			if _, err := l.TryLock(ctx, "k"); err == nil || errors.Is(err, strategy.ErrNotAcquired) {
				t.Errorf("TryLock() with two bad nodes of three = %v, want a node failure that is not %v", err, strategy.ErrNotAcquired)
			}
			lockCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if _, err := l.Lock(lockCtx, "k"); !errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Lock() with two bad nodes of three = %v, want %v and %v", err, strategy.ErrNotAcquired, context.DeadlineExceeded)
			}
		})
	}
}

package redlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestOwedReleasesToAFrozenNodeEnd: with one node of three frozen, every
// Unlock's release to it is skipped (or lost) and owed to it; the node's
// payer gives up once the node has taken nothing for twice NodeTimeout,
// so Wait returns soon after the last Unlock instead of waiting for the
// node, and nothing is left running once the Locker is closed.
func TestOwedReleasesToAFrozenNodeEnd(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	const nodeTimeout = 50 * time.Millisecond
	l, err := redlock.New(poolsOf(nodes), redlock.Config{Config: strategy.Config{TTL: 10 * time.Second}, NodeTimeout: nodeTimeout})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	nodes[2].Pause()
	t.Cleanup(nodes[2].Resume) // before the Locker's Close and the teardown
	ctx := context.Background()
	for i := range 100 {
		lease := mustLock(t, l, fmt.Sprint("frozen:", i))
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() with one node frozen = %v, want nil", err)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 20*nodeTimeout)
	defer cancel()
	start := time.Now()
	if err := l.Wait(waitCtx); err != nil {
		t.Errorf("Wait() after the last Unlock = %v after %v, want nil within %v (the payer gives up on a frozen node)", err, time.Since(start), 20*nodeTimeout)
	}
}

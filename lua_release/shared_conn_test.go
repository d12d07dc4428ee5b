package luarelease_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
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
	locktest.EachWorker(t, workers, "shared:", locktest.RisingPairs(ctx, l, pairs))
	scripts := int64(2 * workers * pairs)
	if gets := pool.Gets(); gets >= scripts/2 {
		t.Errorf("connections taken from the pool = %d for %d scripts, want fewer than %d (shared)", gets, scripts, scripts/2)
	}
	locktest.AssertReleased(t, node, "*shared:*", 10*time.Second)
}

// TestSharedConnectionKilled: the connections of a Locker whose
// goroutines lock and unlock concurrently are killed three times (CLIENT
// KILL) while scripts await their replies on them. Every goroutine goes
// on: a Lock retries, an Unlock that failed is retried until it releases
// or finds the lock no longer its own, and no lock is left held by nobody
// until its TTL: a Lock attempt whose reply was lost is taken back, and a
// take-back that meets a dead connection (the pool lends the ones the
// kill closed) tries again, so no Lock waits for its own lost attempt's
// lock (30 s TTL, 10 s for the whole test). Once the Locker is closed no
// lock is left.
func TestSharedConnectionKilled(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 30 * time.Second})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	locktest.KillWhileBusy(ctx, t, l, []*redistest.Node{node}, 16, 150, "killed:")
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	locktest.AssertReleased(t, node, "*killed:*", 30*time.Second)
}

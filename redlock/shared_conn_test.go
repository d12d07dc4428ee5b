package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

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
	locktest.EachWorker(t, workers, "shared:", func(key string) error {
		var last uint64
		for range pairs {
			lease, err := l.Lock(ctx, key)
			if err != nil {
				return fmt.Errorf("Lock(%q) = %v, want nil", key, err)
			}
			if lease.Key() != key || lease.Fence() <= last {
				return fmt.Errorf("Lock(%q) = a lease of %q with fence %d, want %q with a fence above %d", key, lease.Key(), lease.Fence(), key, last)
			}
			last = lease.Fence()
			if err := lease.Unlock(ctx); err != nil {
				return fmt.Errorf("Unlock(%q) = %v, want nil", key, err)
			}
		}
		return nil
	})
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

// TestSharedNodeConnectionKilled: the connections of two of three nodes
// are killed three times (CLIENT KILL) while the node calls of a Locker's
// concurrent Lock and Unlock calls await their replies on them, so some
// rounds lose their quorum. Every goroutine goes on: a Lock retries, an
// Unlock that failed is retried until it releases or finds the lock no
// longer its own, and no lock is left held by nobody until its TTL (30 s,
// 10 s for the whole test): a round that failed releases every node that
// may hold its lock, and a release that could not reach a node (its
// breaker skipped it, or the connection failed) is owed to it and sent
// once the node answers again. Once the Locker is closed no lock is left
// on any node (a waiter's place in a line may be, until it expires).
func TestSharedNodeConnectionKilled(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	l, err := redlock.New(poolsOf(nodes), redlock.Config{Config: strategy.Config{TTL: 30 * time.Second}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const workers, pairs = 16, 60
	done := make(chan struct{})
	go func() {
		defer close(done)
		locktest.EachWorker(t, workers, "killed:", func(key string) error {
			for range pairs {
				lease, err := l.Lock(ctx, key)
				if err != nil {
					return fmt.Errorf("Lock(%q) = %v, want nil (it retries failed nodes, and no failed round strands its lock)", key, err)
				}
				for err = lease.Unlock(ctx); err != nil && !errors.Is(err, strategy.ErrNotHeld); err = lease.Unlock(ctx) {
					if ctx.Err() != nil {
						return fmt.Errorf("Unlock(%q) = %v until the test's end, want nil", key, err)
					}
				}
			}
			return nil
		})
	}()
	killed := 0
	for range 3 {
		time.Sleep(20 * time.Millisecond)
		for _, n := range nodes[:2] {
			k, err := redis.Int(n.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
			if err != nil {
				t.Fatalf("CLIENT KILL = %v, want nil", err)
			}
			killed += k
		}
	}
	<-done
	if killed == 0 {
		t.Errorf("CLIENT KILL killed no connection, want the Locker's")
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	for _, n := range nodes {
		locktest.AssertUnlocked(t, n, "*killed:*", 30*time.Second)
	}
}

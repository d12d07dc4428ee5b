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

// TestFailedPassKeepsTheLease: an Unlock that would pass the lock to a
// goroutine of the same Locker waiting for the key (Pass) fails because
// every node's pool fails. That failure does not spend the lease: the
// retried Unlock hands the lock to the waiter.
func TestFailedPassKeepsTheLease(t *testing.T) {
	nodes := startNodes(t, 3)
	pools := make([]strategy.Pool, len(nodes))
	faulty := make([]*locktest.FaultyPool, len(nodes))
	for i, n := range nodes {
		faulty[i] = locktest.NewFaultyPool(n.Pool())
		pools[i] = faulty[i]
	}
	l, err := redlock.New(pools, passConfig())
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	t.Cleanup(func() { waitIdle(t, l) })
	held := mustHoldAll(t, nodes, l, "k")

	done := lockUntilCleanup(t, l, "k")
	waitQueued(t, nodes, 1, len(nodes))

	for _, p := range faulty {
		p.Set(locktest.PoolFails)
	}
	err = held.Unlock(context.Background())
	for _, p := range faulty {
		p.Set(locktest.PoolHealthy)
	}
	if err == nil || errors.Is(err, strategy.ErrNotHeld) {
		t.Fatalf("Unlock() with every pool failing = %v, want a node failure that is not %v", err, strategy.ErrNotHeld)
	}
	// Right after the failures each node's breaker may skip it while a
	// probe (the waiter's own attempt) is in flight: a transient failure
	// that spends nothing either, so Unlock is retried until it is not
	// one. A spent lease would say ErrNotHeld at once.
	if err := unlockRetried(t, held); err != nil {
		t.Errorf("retried Unlock() = %v, want nil (the failed one spent nothing)", err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter's Lock() = %v, want nil (handed the lock)", r.err)
	}
	if err := r.lease.Unlock(context.Background()); err != nil {
		t.Errorf("waiter's Unlock() = %v, want nil", err)
	}
}

// unlockRetried calls lease.Unlock until it succeeds or fails with
// ErrNotHeld, for at most 5 s, and returns its last error.
func unlockRetried(t *testing.T, lease strategy.Lease) error {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := lease.Unlock(context.Background())
		if err == nil || errors.Is(err, strategy.ErrNotHeld) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

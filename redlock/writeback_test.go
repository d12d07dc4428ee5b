package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestWriteBackFailure: an acquire wins nodes 0-2 (3 and 4 hold another
// owner's key) with diverged counters (node 0 at 1000), so it must raise
// nodes 1 and 2 to 1001. Between the two rounds (a gate at
// pointBeforeWriteBack) the lock on node 1 disappears, as if it expired:
// the write-back is refused there, no quorum holds 1001, and the acquire
// fails without ErrNotAcquired and releases what it took. Node 1's counter
// is left alone. A crash at the same point leaves the lock where it was
// taken.
func TestWriteBackFailure(t *testing.T) {
	nodes, l, wait := startLocker(t, 5, Config{NodeTimeout: 2 * time.Second})
	rkey := protocol.LockKey("lock:", "k")
	// Node 0 at 1000, nodes 1 and 2 behind at 1 (a node without a counter
	// would start from its clock, far above).
	for i, v := range []int{1000, 1, 1} {
		if _, err := nodes[i].Do("SET", FenceKey(rkey), v); err != nil {
			t.Fatalf("SET counter on node %d = %v, want nil", i, err)
		}
	}
	for _, n := range nodes[3:] { // another owner's key: nodes 3 and 4 refuse
		if _, err := n.Do("SET", rkey, "other", "PX", 60000); err != nil {
			t.Fatalf("SET %s on %s = %v, want nil", rkey, n.Addr(), err)
		}
	}
	gate := fault.NewGate(pointBeforeWriteBack)
	ctx := fault.With(context.Background(), gate.Hook)
	done := make(chan error, 1)
	go func() { _, err := l.TryLock(ctx, "k"); done <- err }() // ends when TryLock returns
	select {
	case <-gate.Reached():
	case err := <-done:
		t.Fatalf("TryLock() = %v before the write-back, want it held at the gate", err)
	}
	if _, err := nodes[1].Do("DEL", rkey); err != nil {
		t.Fatalf("DEL on node 1 = %v, want nil", err)
	}
	gate.Open()
	err := <-done
	if err == nil || errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, errWriteBack) || !errors.Is(err, errNotOurs) {
		t.Fatalf("TryLock() = %v, want a write-back failure naming the lost lock, not %v", err, strategy.ErrNotAcquired)
	}
	wait()
	for i, n := range nodes[:3] {
		if v := get(t, n, rkey); v != "" {
			t.Errorf("GET %s on node %d after the failed acquire = %q, want no key (released)", rkey, i, v)
		}
	}
	if v := get(t, nodes[1], FenceKey(rkey)); v != "2" {
		t.Errorf("counter on node 1 = %q, want 2 (its own acquire's, from 1; the lock was not ours there: no write-back)", v)
	}

	crash := fault.With(context.Background(), fault.Crash(pointBeforeWriteBack))
	if _, err := l.TryLock(crash, "k"); !errors.Is(err, fault.ErrCrashed) {
		t.Fatalf("TryLock() with a crash before the write-back = %v, want %v", err, fault.ErrCrashed)
	}
	wait()
	for i, n := range nodes[:3] {
		if v := get(t, n, rkey); v == "" {
			t.Errorf("GET %s on node %d after a crash = no key, want the dead client's lock left in place", rkey, i)
		}
	}
}

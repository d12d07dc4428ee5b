package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestReleaseOvertakesLateSet: an acquire wins on nodes 0-3 while its
// request to node 4 is held back (a gate at pointAcquireOn(4)); the lease
// is released, and node 4 finds nothing to delete; only then does node 4
// get the SET. The late SET must be taken back: no node may keep a lock
// that nobody owns until its TTL runs out.
func TestReleaseOvertakesLateSet(t *testing.T) {
	nodes, l, wait := startLocker(t, 5, Config{NodeTimeout: 2 * time.Second, Config: strategy.Config{TTL: time.Minute}})

	gate := fault.NewGate(pointAcquireOn(4))
	t.Cleanup(gate.Open)
	lease, err := l.TryLock(fault.With(context.Background(), gate.Hook), "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil (nodes 0-3 are a quorum)", err)
	}
	select {
	case <-gate.Reached():
	case <-time.After(5 * time.Second):
		t.Fatalf("the acquire never reached node 4's gate")
	}
	if err := lease.Unlock(context.Background()); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	gate.Open() // node 4 gets the SET only now, after the release
	wait()
	for i, n := range nodes {
		if v := get(t, n, protocol.LockKey("lock:", "k")); v != "" {
			t.Errorf("GET lock:k on node %d = %q after the release, want no lock", i, v)
		}
	}
}

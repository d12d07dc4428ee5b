package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestQuorumOneTwoHolders reproduces article 003's sample, whose acquire
// returns as soon as one node's SET NX succeeds: with Quorum 1, client A
// locks node 0 while nodes 1-4 are down; they come back empty and client B
// locks them. Both hold the lock at once. The default majority quorum
// refuses B.
func TestQuorumOneTwoHolders(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	cfg := redlock.Config{Quorum: 1, NodeTimeout: patient, Config: strategy.Config{TTL: 10 * time.Second}}
	clientA := newLocker(t, nodes, cfg)
	clientB := newLocker(t, nodes, cfg)
	for _, n := range nodes[1:] {
		n.Kill() // killed, not frozen: a frozen node would still run A's SET when it thaws
	}
	a, err := clientA.TryLock(ctx, "res")
	if err != nil {
		t.Fatalf("A TryLock() with only node 0 up = %v, want nil (Quorum 1)", err)
	}
	// A decided on node 0's answer; its calls to the dead nodes end in the
	// background. Let them end before the nodes come back, or a late one
	// could still land there.
	waitIdle(t, clientA)
	for _, n := range nodes[1:] {
		n.Restart()
	}
	b, err := clientB.TryLock(ctx, "res")
	if err != nil {
		t.Fatalf("B TryLock() after nodes 1-4 came back empty = %v, want nil (Quorum 1)", err)
	}
	if !holds(a) || !holds(b) {
		t.Errorf("A holds %v (deadline %v), B holds %v (deadline %v); want both at once",
			holds(a), a.Deadline(), holds(b), b.Deadline())
	}
	waitIdle(t, clientB)
	wantValues(t, nodes, protocol.LockKey("lock:", "res"), []string{a.Token(), b.Token(), b.Token(), b.Token(), b.Token()})

	majority := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	if _, err := majority.TryLock(ctx, "res"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() with the default quorum = %v, want %v", err, strategy.ErrNotAcquired)
	}
}

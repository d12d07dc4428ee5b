package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestNodeCallsShareAConnection: the node calls of a Locker's concurrent
// Lock and Unlock calls travel on one shared connection per node
// (redisconn.Pipeline), the restart guard's CLIENT GETNAME with each, so the
// Locker takes far fewer connections from each node's pool than it makes
// calls to that node, and every call still gets its own reply: every Lock
// holds its own key with a fencing token above the last one its goroutine
// saw, and every Unlock releases it, with nothing left on any node once
// its background calls ended. The Locker's NodeTimeout is patient, not
// the TTL's tenth: on a loaded machine a healthy node's reply can take
// longer than 250 ms, which is a node failure, not a shared reply lost.
// locktest.BusyBound ends a test that hangs.
//
// The claim is checked on a majority of the nodes, not on each: with
// early quorum a Lock returns before the last node answered, so a node
// that falls behind (its process descheduled on a loaded machine; 3 runs
// in 10 on Valkey) collects the workers' calls, and past MaxInFlight
// awaiting replies each further call goes on a connection of its own, by
// design (a frozen node must not fill the shared connection's buffers).
func TestNodeCallsShareAConnection(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	pools := make([]*locktest.FaultyPool, len(nodes))
	ps := make([]strategy.Pool, len(nodes))
	for i, n := range nodes {
		pools[i] = locktest.NewFaultyPool(n.Pool())
		ps[i] = pools[i]
	}
	l, err := redlock.New(ps, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: 10 * time.Second}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), locktest.BusyBound)
	defer cancel()
	const workers, pairs = 16, 50
	locktest.EachWorker(t, workers, "shared:", locktest.RisingPairs(ctx, l, pairs))
	waitIdle(t, l)
	calls := int64(2 * workers * pairs) // per node: one acquire and one release per pair
	shared := 0
	gets := make([]int64, len(pools))
	for i, p := range pools {
		gets[i] = p.Gets()
		if gets[i] < calls/2 {
			shared++
		}
	}
	assert.GreaterOrEqual(t, shared, len(pools)/2+1,
		"nodes whose calls shared a connection (fewer than %d taken for %d calls): connections taken per node = %v, want a majority of nodes", calls/2, calls, gets)
	for _, n := range nodes {
		locktest.AssertReleased(t, n, "*shared:*", 10*time.Second)
	}
}

// TestSharedNodeConnectionKilled: the connections of two of three nodes
// are killed three times (CLIENT KILL) while the node calls of a Locker's
// concurrent Lock and Unlock calls await their replies on them, so some
// rounds lose their quorum. Every goroutine goes on: a Lock retries, an
// Unlock that failed is retried until it releases or finds the lock no
// longer its own, and no lock is left held by nobody until its TTL
// (locktest.BusyTTL, twice the test's bound locktest.BusyBound, which is
// many times what the test takes on a loaded machine): a round that
// failed releases every node that
// may hold its lock, and a release that could not reach a node (its
// breaker skipped it, or the connection failed) is owed to it and sent
// once the node answers again. Once the Locker is closed no lock is left
// on any node (a waiter's place in a line may be, until it expires):
// Close pays what is still owed to a node whose breaker is not suspect
// (one still failing is owed nothing after Close, and its locks expire at
// their TTL). The NodeTimeout is patient, so that on a loaded machine
// only the kills fail calls, not a healthy node's slow reply.
func TestSharedNodeConnectionKilled(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	l, err := redlock.New(poolsOf(nodes), redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: locktest.BusyTTL}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), locktest.BusyBound)
	defer cancel()
	locktest.KillWhileBusy(ctx, t, l, nodes[:2], 16, 60, "killed:")
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	for _, n := range nodes {
		locktest.AssertUnlocked(t, n, "*killed:*", locktest.BusyTTL)
	}
}

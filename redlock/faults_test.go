package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestTwoNodesKilled: with 2 of 5 nodes dead, a held lock can still be
// extended and released, still keeps others out, and new locks can be
// taken.
func TestTwoNodesKilled(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	held := mustLock(t, l, "held")
	waitIdle(t, l) // the nodes the decision did not wait for hold it too
	nodes[3].Kill()
	nodes[4].Kill()

	before := held.Deadline()
	if err := held.Extend(ctx, 20*time.Second); err != nil {
		t.Errorf("Extend() with 2 nodes killed = %v, want nil", err)
	}
	if !held.Deadline().After(before.Add(5 * time.Second)) {
		t.Errorf("Deadline() after Extend(20s) = %v, want later than %v", held.Deadline(), before.Add(5*time.Second))
	}
	if _, err := l.TryLock(ctx, "held"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() on the held key = %v, want %v", err, strategy.ErrNotAcquired)
	}
	other := mustLock(t, l, "other")
	if err := other.Unlock(ctx); err != nil {
		t.Errorf("Unlock() of a lock taken with 2 nodes killed = %v, want nil", err)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Errorf("Unlock() with 2 nodes killed = %v, want nil", err)
	}
	waitIdle(t, l)
	wantValues(t, nodes[:3], protocol.LockKey("lock:", "held"), repeat("", 3))
	wantValues(t, nodes[:3], protocol.LockKey("lock:", "other"), repeat("", 3))
	again, err := l.TryLock(ctx, "held")
	if err != nil {
		t.Fatalf("TryLock() after Unlock = %v, want nil", err)
	}
	if err := again.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

// TestThreeNodesKilled: with 3 of 5 nodes dead no quorum exists. Lock gives
// up with ErrNotAcquired at its context deadline and never succeeds, the
// two live nodes are left clean, and a lease taken before the kill can
// neither be extended nor confirmed released.
func TestThreeNodesKilled(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	held := mustLock(t, l, "held")
	waitIdle(t, l)
	for _, n := range nodes[2:] {
		n.Kill()
	}

	const timeout = 300 * time.Millisecond
	lockCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	lease, err := l.Lock(lockCtx, "k")
	elapsed := time.Since(start)
	assert.Nil(t, lease, "Lock() with 3 of 5 nodes killed")
	assert.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock() with 3 of 5 nodes killed")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "Lock() with 3 of 5 nodes killed")
	// A killed node refuses at once, so nothing but ctx ends the Lock; a
	// Lock that retried past its ctx would not return at all. The bound
	// leaves a loaded machine the node timeout's worth of slack.
	assert.Less(t, elapsed, timeout+patient, "Lock() with 3 of 5 nodes killed: returned that long after it began, want within its %v context", timeout)
	if _, err := l.TryLock(ctx, "k"); err == nil || errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() with 3 of 5 nodes killed = %v, want a node failure that is not %v", err, strategy.ErrNotAcquired)
	}
	if err := held.Extend(ctx, time.Second); err == nil || errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Extend() with 3 of 5 nodes killed = %v, want a node failure that is not %v", err, strategy.ErrNotHeld)
	}
	if err := held.Unlock(ctx); err == nil || errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Unlock() with 3 of 5 nodes killed = %v, want a node failure that is not %v", err, strategy.ErrNotHeld)
	}
	waitIdle(t, l)
	// The failed attempts released what they took on the live nodes, and
	// the Unlock released the held lock there.
	wantValues(t, nodes[:2], protocol.LockKey("lock:", "k"), repeat("", 2))
	wantValues(t, nodes[:2], protocol.LockKey("lock:", "held"), repeat("", 2))
}

// TestOneNodeFrozen: with one node frozen, Lock, Extend and Unlock
// decide on the other four and do not wait for the frozen node's 10 s
// timeout; a held lock still keeps others out. An operation that waited
// for the frozen node would take the whole NodeTimeout; one that did not
// takes a few round trips, so a fifth of it leaves a loaded machine ample
// slack.
func TestOneNodeFrozen(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	const nodeTimeout = 10 * time.Second
	const fast = nodeTimeout / 5
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: nodeTimeout})
	warm := mustLock(t, l, "warm") // pooled, named connections to every node
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	nodes[4].Pause()
	t.Cleanup(nodes[4].Resume) // runs before the Locker's Wait and the teardown

	// quick runs one operation and checks it did not wait for the frozen node.
	quick := func(name string, op func() error) {
		t.Helper()
		start := time.Now()
		err := op()
		assert.Less(t, time.Since(start), fast, "%s with node 4 frozen took that long, want below a fifth of NodeTimeout %v", name, nodeTimeout)
		require.NoError(t, err, "%s with node 4 frozen", name)
	}
	var lease strategy.Lease
	quick("Lock()", func() (err error) { lease, err = l.Lock(ctx, "k"); return err })
	quick("Extend()", func() error { return lease.Extend(ctx, 5*time.Second) })
	quick("TryLock() on the held key", func() error {
		if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
			return fmt.Errorf("got %v, want %w", err, strategy.ErrNotAcquired)
		}
		return nil
	})
	quick("Unlock()", func() error { return lease.Unlock(ctx) })
	// Unlock returns once a quorum deleted the lock; the other live node's
	// release finishes in the background (see Release). The frozen node
	// thaws first, so that its calls end now rather than at NodeTimeout.
	nodes[4].Resume()
	waitIdle(t, l)
	wantValues(t, nodes[:4], protocol.LockKey("lock:", "k"), repeat("", 4))
}

// TestFailedAcquireReleasesLateNode: an attempt refused by a majority is
// decided without waiting for a frozen node; when that node thaws, the SET
// it then runs succeeds after the decision, and the node's goroutine
// releases it. No key of the attempt is left anywhere.
func TestFailedAcquireReleasesLateNode(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	const nodeTimeout = 10 * time.Second
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: nodeTimeout})
	warm := mustLock(t, l, "warm")
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	for _, n := range nodes[:3] {
		if _, err := n.Do("SET", protocol.LockKey("lock:", "k"), "other", "PX", 60000); err != nil {
			t.Fatalf("SET on %s = %v, want nil", n.Addr(), err)
		}
	}
	resetStats(t, nodes[4:])
	nodes[4].Pause()
	t.Cleanup(nodes[4].Resume)

	start := time.Now()
	_, err := l.TryLock(ctx, "k")
	elapsed := time.Since(start)
	if !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock() = %v, want %v", err, strategy.ErrNotAcquired)
	}
	// Waiting for the frozen node would take the whole NodeTimeout.
	assert.Less(t, elapsed, nodeTimeout/5, "TryLock() took that long, want it decided without the frozen node (NodeTimeout %v)", nodeTimeout)
	nodes[4].Resume() // the SET now runs, after the decision
	waitIdle(t, l)
	if got := calls(t, nodes[4], "set"); got != 2 {
		t.Errorf("SET calls on the late node = %d, want 2 (the late SET and its fencing counter's, in the acquire script)", got)
	}
	if got := calls(t, nodes[4], "del"); got != 1 {
		t.Errorf("DEL calls on the late node = %d, want 1 (its release)", got)
	}
	if got := calls(t, nodes[4], "evalsha"); got != 2 {
		t.Errorf("EVALSHA calls on the late node = %d, want 2 (the late acquire script and its release)", got)
	}
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), []string{"other", "other", "other", "", ""})
}

// TestNodeTimeoutBoundsFrozenNodes uses the default NodeTimeout (a tenth
// of a 2 s TTL: 200 ms): with 2 of 3 nodes frozen, TryLock fails with
// context.DeadlineExceeded once the frozen calls time out, not at the end
// of its own context (which has no deadline: only a NodeTimeout can be
// DeadlineExceeded, and a TryLock that waited for ctx would get its
// cancellation after a minute instead), and every background call (the
// frozen SETs and the releases sent after the failure) ends within two
// node timeouts, well before the TTL, with the TTL's other 1.6 s as slack
// for a loaded machine.
func TestNodeTimeoutBoundsFrozenNodes(t *testing.T) {
	nodes := startNodes(t, 3)
	const ttl = 2 * time.Second
	l := newLocker(t, nodes, redlock.Config{Config: strategy.Config{TTL: ttl}})
	nodeTimeout := l.Config().NodeTimeout
	require.Equal(t, ttl/10, nodeTimeout, "Config().NodeTimeout")
	for _, n := range nodes[1:] {
		n.Pause()
		t.Cleanup(n.Resume)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := time.AfterFunc(time.Minute, cancel)
	defer stop.Stop()
	start := time.Now()
	_, err := l.TryLock(ctx, "k")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "TryLock() with 2 of 3 nodes frozen, its ctx without a deadline")
	assert.NotErrorIs(t, err, strategy.ErrNotAcquired, "TryLock() with 2 of 3 nodes frozen")
	assert.NotErrorIs(t, err, context.Canceled, "TryLock() with 2 of 3 nodes frozen: it waited for its ctx")
	waitIdle(t, l)
	assert.Less(t, time.Since(start), ttl, "background calls ended that long after the attempt began, want within 2 x %v, well before the TTL", nodeTimeout)
}

// TestUnlockReleasedDespiteFailures: a lock held on exactly 3 of 5 nodes
// (the other two hold someone else's key) is released although one or two
// of its nodes died: the survivors delete it, and too few nodes may still
// hold its token to form a quorum, so Unlock returns nil. Extend, which
// needs a quorum that still holds the token, fails.
func TestUnlockReleasedDespiteFailures(t *testing.T) {
	for _, killed := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d killed", killed), func(t *testing.T) {
			nodes := startNodes(t, 5)
			ctx := context.Background()
			for _, n := range nodes[3:] {
				if _, err := n.Do("SET", protocol.LockKey("lock:", "k"), "other", "PX", 60000); err != nil {
					t.Fatalf("SET on %s = %v, want nil", n.Addr(), err)
				}
			}
			l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
			lease := mustLock(t, l, "k")
			for _, n := range nodes[3-killed : 3] {
				n.Kill()
			}
			if err := lease.Extend(ctx, time.Minute); err == nil || errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("Extend() = %v, want a node failure that is not %v", err, strategy.ErrNotHeld)
			}
			if err := lease.Unlock(ctx); err != nil {
				t.Errorf("Unlock() = %v, want nil (released on the survivors)", err)
			}
			waitIdle(t, l)
			wantValues(t, nodes[:3-killed], protocol.LockKey("lock:", "k"), repeat("", 3-killed))
		})
	}
}

// TestBreakerSkipsFrozenNode: once a call to a frozen node timed out, the
// Locker sends it one probe at a time instead of one call per request, so
// the connections it opens to the node stay few.
func TestBreakerSkipsFrozenNode(t *testing.T) {
	nodes := startNodes(t, 3)
	ctx := context.Background()
	const nodeTimeout = 100 * time.Millisecond
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: nodeTimeout})
	resetStats(t, nodes[2:])
	nodes[2].Pause()
	t.Cleanup(nodes[2].Resume)

	ops := 0
	for start := time.Now(); time.Since(start) < 20*nodeTimeout; ops++ {
		lease, err := lockWithin(l, "k", 5*time.Second)
		if err != nil {
			t.Fatalf("Lock() with node 2 frozen = %v, want nil", err)
		}
		// A healthy node's reply can outlast the 100 ms NodeTimeout on a
		// loaded machine, failing the Unlock's quorum: try again, within
		// 5 s, until it releases, or finds that the failed try did.
		unlockCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = lease.Unlock(unlockCtx)
		for retried := false; err != nil; retried = true {
			if retried && errors.Is(err, strategy.ErrNotHeld) {
				err = nil
				break
			}
			if unlockCtx.Err() != nil {
				break
			}
			t.Logf("Unlock() with node 2 frozen = %v; trying again", err)
			err = lease.Unlock(unlockCtx)
		}
		cancel()
		if err != nil {
			t.Fatalf("Unlock() with node 2 frozen = %v until 5 s passed, want nil", err)
		}
	}
	nodes[2].Resume()
	waitIdle(t, l)
	info, err := redis.String(nodes[2].Do("INFO", "stats"))
	if err != nil {
		t.Fatalf("INFO stats = %v, want a reply", err)
	}
	conns := infoInt(t, info, "total_connections_received")
	t.Logf("%d lock+unlock pairs, %d connections to the frozen node", ops, conns)
	if conns > ops/4+40 {
		t.Errorf("connections to the frozen node = %d for %d lock+unlock pairs, want far fewer than one per call", conns, ops)
	}
}

// infoInt returns the integer field name of an INFO reply.
func infoInt(t *testing.T, info, name string) int {
	t.Helper()
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("INFO field %s = %q: %v", name, v, err)
			}
			return n
		}
	}
	t.Fatalf("INFO has no field %s", name)
	return 0
}

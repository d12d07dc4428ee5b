package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// passLine and passSeen are the line of waiters for key "k" on a node
// and their last-seen times.
var (
	passLine = protocol.KeysOf(protocol.LockKey("lock:", "k")).Line
	passSeen = protocol.KeysOf(protocol.LockKey("lock:", "k")).Seen
)

// passConfig is the Config of the pass tests' Lockers: a TTL that cannot
// run out during a test, and a Retry that waits an hour, so that a waiter
// attempts on its own only to keep its place in line (every LineStale/2),
// when poked, or when a notice names it.
func passConfig() redlock.Config {
	return redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: time.Minute, Retry: strategy.Fixed(time.Hour)}}
}

// waitQueued waits until the line of "k" holds at least n waiters on at
// least onNodes of nodes, or fails the test after 5 s.
func waitQueued(t *testing.T, nodes []*redistest.Node, n, onNodes int) {
	t.Helper()
	waitQueuedFor(t, nodes, "k", n, onNodes)
}

// waitQueuedFor is waitQueued for the lock named key.
func waitQueuedFor(t *testing.T, nodes []*redistest.Node, key string, n, onNodes int) {
	t.Helper()
	line := protocol.KeysOf(protocol.LockKey("lock:", key)).Line
	for deadline := time.Now().Add(5 * time.Second); ; {
		queued := 0
		for _, node := range nodes {
			if got, err := redis.Int(node.Do("ZCARD", line)); err == nil && got >= n {
				queued++
			}
		}
		if queued >= onNodes {
			return
		}
		if time.Now().After(deadline) {
			states := ""
			if key == "k" {
				states = "; nodes: " + nodeStates(t, nodes)
			}
			t.Fatalf("%s holds %d waiters on %d of %d nodes after 5 s, want on %d%s", line, n, queued, len(nodes), onNodes, states)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// nodeStates describes, for failure messages, what each node holds for
// "k": the lock's value and remaining TTL, and the line's members with
// their tickets.
func nodeStates(t *testing.T, nodes []*redistest.Node) string {
	t.Helper()
	var b strings.Builder
	for i, n := range nodes {
		v := value(t, n, protocol.LockKey("lock:", "k"))
		pttl, _ := redis.Int64(n.Do("PTTL", protocol.LockKey("lock:", "k")))
		members, _ := redis.Strings(n.Do("ZRANGE", passLine, 0, -1, "WITHSCORES"))
		fmt.Fprintf(&b, "\n\tnode %d: lock:k=%q pttl=%d line=%q", i, v, pttl, members)
	}
	return b.String()
}

// lineKeysGone fails the test unless the line of "k" and its last-seen
// times are gone from every node.
func lineKeysGone(t *testing.T, nodes []*redistest.Node) {
	t.Helper()
	for i, n := range nodes {
		got, err := redis.Int(n.Do("EXISTS", passLine, passSeen))
		if err != nil || got != 0 {
			t.Errorf("EXISTS %s %s on node %d = %d, %v; want 0, nil (the waiter left the line); nodes: %s", passLine, passSeen, i, got, err, nodeStates(t, nodes))
		}
	}
}

// mustHoldAll takes key with l and waits until the acquire round has run
// on every node, so that the lease's token is on all of them before anyone
// else contends. (Without the wait, a node that answers A's round late may
// first see a waiter's attempt, which then takes that node, and A's late
// attempt there is refused and queues A behind it.)
func mustHoldAll(t *testing.T, nodes []*redistest.Node, l *redlock.Locker, key string) strategy.Lease {
	t.Helper()
	lockKey := protocol.LockKey("lock:", key)
	lease := mustLock(t, l, key)
	waitIdle(t, l)
	// On a loaded machine a node the quorum did not wait for can miss
	// its NodeTimeout: lock again, a few times, until every node has it.
	for try := 1; try < 3 && !slices.Equal(values(t, nodes, lockKey), repeat(lease.Token(), len(nodes))); try++ {
		t.Logf("lock %q reached nodes %q, not all; locking again", key, values(t, nodes, lockKey))
		require.NoError(t, lease.Unlock(context.Background()), "Unlock of a lock some nodes missed")
		waitIdle(t, l)
		lease = mustLock(t, l, key)
		waitIdle(t, l)
	}
	wantValues(t, nodes, lockKey, repeat(lease.Token(), len(nodes)))
	if t.Failed() {
		t.FailNow()
	}
	return lease
}

// waiterContext returns a context for a waiter's Lock that ends after a
// minute, or when the test ends (before the Lockers are waited for and the
// nodes torn down), so that a test that stops early leaves no Lock behind.
func waiterContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// lockUntilCleanup is lockAsync with a waiterContext.
func lockUntilCleanup(t *testing.T, l strategy.Locker, key string) <-chan lockResult {
	t.Helper()
	ctx := waiterContext(t)
	done := make(chan lockResult, 1)
	go func() {
		lease, err := l.Lock(ctx, key)
		done <- lockResult{lease: lease, err: err, at: time.Now()}
	}()
	return done
}

// queuedBehind returns, on 5 new nodes, a Locker, the lease A of its
// goroutine that holds "k", and the result channel of B, a goroutine of
// the same Locker whose Lock waits for "k" and is queued in the line of a
// quorum of the nodes.
func queuedBehind(t *testing.T) (nodes []*redistest.Node, l *redlock.Locker, a strategy.Lease, b <-chan lockResult) {
	t.Helper()
	nodes = startNodes(t, 5)
	l = newLocker(t, nodes, passConfig())
	a = mustHoldAll(t, nodes, l, "k")
	b = lockUntilCleanup(t, l, "k")
	waitQueued(t, nodes, 1, l.Config().Quorum)
	return nodes, l, a, b
}

// TestUnlockPassesToLocalWaiter: A holds "k" and B, a goroutine of the same
// Locker, is queued for it. A's Unlock releases the lock and takes it for B
// in one round (a pass): B's Lock returns the lease the Unlock made (its
// token ends with ".p" and a number, which B's own attempts never have),
// with a fence above A's, and every node ends up holding B's token with
// B out of the line.
//
// B's own attempts (every LineStale/2, to keep its place) cannot take the
// lock instead: on every node the pass deletes A's lock and sets B's in
// one script, so B's own attempt finds either A's lock (refused) or the
// pass's (a token of its own Lock call, refused too).
func TestUnlockPassesToLocalWaiter(t *testing.T) {
	nodes, l, a, done := queuedBehind(t)
	ctx := context.Background()

	b := handOver(t, a, done)
	if tok := b.Token(); !strings.Contains(tok, ".p") {
		t.Errorf("B's Token() = %q, want one containing %q (passed by A's Unlock)", tok, ".p")
	}
	if b.Fence() <= a.Fence() {
		t.Errorf("B's Fence() = %d, want above A's %d", b.Fence(), a.Fence())
	}
	if !holds(b) {
		t.Errorf("B's Deadline() = %v, want in the future", b.Deadline())
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), repeat(b.Token(), len(nodes)))
	lineKeysGone(t, nodes)
	if t.Failed() {
		t.Logf("A's token %q, B's %q; nodes: %s", a.Token(), b.Token(), nodeStates(t, nodes))
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B's Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), repeat("", len(nodes)))
}

// TestPassReportsNotHeld: as TestUnlockPassesToLocalWaiter, but A's lock
// is deleted by hand from every node before A's Unlock. The Unlock reports
// that A no longer held the lock, and B still gets it: the key is free.
//
// Between the deletion and the Unlock, B's own attempt may take the free
// key first; B then holds it under a token of its own, and the nodes the
// losing attempt took are released. So the test asks for a quorum of nodes
// holding B's token and no node holding another.
func TestPassReportsNotHeld(t *testing.T) {
	nodes, l, a, done := queuedBehind(t)
	ctx := context.Background()

	for _, n := range nodes {
		if _, err := n.Do("DEL", protocol.LockKey("lock:", "k")); err != nil {
			t.Fatalf("DEL lock:k on %s = %v, want nil", n.Addr(), err)
		}
	}
	released := time.Now()
	if err := a.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("A's Unlock() of a deleted lock = %v, want %v", err, strategy.ErrNotHeld)
	}
	b := awaitLock(t, done, released, 5*time.Second)
	if !strings.Contains(b.Token(), ".p") {
		t.Logf("B's Token() = %q: B's own attempt took the freed key before the pass", b.Token())
	}
	if b.Fence() <= a.Fence() {
		t.Errorf("B's Fence() = %d, want above A's %d", b.Fence(), a.Fence())
	}
	waitIdle(t, l)
	got := values(t, nodes, protocol.LockKey("lock:", "k"))
	held := 0
	for i, v := range got {
		switch v {
		case b.Token():
			held++
		case "":
		default:
			t.Errorf("GET lock:k on node %d = %q, want B's %q or none (all nodes: %q)", i, v, b.Token(), got)
		}
	}
	if q := l.Config().Quorum; held < q {
		t.Errorf("nodes holding B's token %q = %d, want at least %d (all nodes: %q)", b.Token(), held, q, got)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B's Unlock() = %v, want nil", err)
	}
}

// heldResult is what a goroutine of TestPassServesRemoteWaiterFirst got.
type heldResult struct {
	name  string
	token string
	fence uint64
	err   error
}

// lockThenUnlock runs l.Lock(key) in a goroutine bounded by a minute and
// by the end of the test; once it holds the lock it sends name on order,
// then unlocks. Its result arrives on the returned channel.
func lockThenUnlock(t *testing.T, l strategy.Locker, key, name string, order chan<- string) <-chan heldResult {
	t.Helper()
	ctx := waiterContext(t)
	done := make(chan heldResult, 1)
	go func() {
		r := heldResult{name: name}
		lease, err := l.Lock(ctx, key)
		if err == nil {
			r.token, r.fence = lease.Token(), lease.Fence()
			order <- name // while holding: nobody else can get here meanwhile
			uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = lease.Unlock(uctx)
			cancel()
		}
		r.err = err
		done <- r
	}()
	return done
}

// TestPassServesRemoteWaiterFirst: C, a waiter of another Locker, queued
// for "k" before B, a waiter of A's Locker. A's Unlock makes its pass
// attempt for B, but the nodes keep the key for C, whose ticket is
// earlier: C gets the lock before B, and B gets it after C.
//
// The order also holds when the release reaches the nodes at different
// times: C's attempt may take the nodes that deleted A's lock first and
// fail on the others; its undo puts C back in those nodes' lines (a SET
// takes the waiter out), so C stays first.
func TestPassServesRemoteWaiterFirst(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	la := newLocker(t, nodes, passConfig())
	lc := newLocker(t, nodes, passConfig())
	a := mustHoldAll(t, nodes, la, "k")

	order := make(chan string, 2)
	cDone := lockThenUnlock(t, lc, "k", "C", order)
	waitQueued(t, nodes, 1, len(nodes)) // C's ticket is taken before B's Lock begins
	bDone := lockThenUnlock(t, la, "k", "B", order)
	waitQueued(t, nodes, 2, len(nodes))
	before := nodeStates(t, nodes)

	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("A's Unlock() = %v, want nil", err)
	}
	results := map[string]heldResult{}
	timeout := time.After(20 * time.Second)
	for range 2 {
		select {
		case r := <-cDone:
			results[r.name] = r
		case r := <-bDone:
			results[r.name] = r
		case <-timeout:
			t.Fatalf("waiters' Lock and Unlock have not all returned 20 s after A's Unlock (done: %v)", results)
		}
	}
	for _, name := range []string{"C", "B"} {
		if r := results[name]; r.err != nil {
			t.Errorf("%s's Lock() then Unlock() = %v, want nil", name, r.err)
		}
	}
	if t.Failed() {
		return
	}
	close(order)
	var got []string
	for name := range order {
		got = append(got, name)
	}
	if len(got) != 2 || got[0] != "C" || got[1] != "B" {
		t.Errorf("holders after A's Unlock, in order = %v, want [C B] (C's ticket is earlier than B's); tokens A %q, C %q, B %q", got, a.Token(), results["C"].token, results["B"].token)
	}
	if t.Failed() {
		t.Logf("nodes before A's Unlock: %s", before)
	}
	c, b := results["C"], results["B"]
	if c.fence <= a.Fence() || b.fence <= c.fence {
		t.Errorf("fences A, C, B = %d, %d, %d; want increasing", a.Fence(), c.fence, b.fence)
	}
}

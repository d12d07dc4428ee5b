package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// lockResult is what a Lock in a goroutine returned, and when.
type lockResult struct {
	lease strategy.Lease
	err   error
	at    time.Time
}

// lockAsync runs l.Lock(key) in a goroutine bounded by d and returns the
// channel its result arrives on; the goroutine ends when Lock returns.
func lockAsync(l strategy.Locker, key string, d time.Duration) <-chan lockResult {
	done := make(chan lockResult, 1)
	go func() {
		lease, err := lockWithin(l, key, d)
		done <- lockResult{lease: lease, err: err, at: time.Now()}
	}()
	return done
}

// waitSubscribed waits until every node has a subscriber on the release
// channel of rkey, or fails the test after 5 s: waiters listen on their
// Locker's inbox for the key, the key's notice channel + ":" + the
// Locker's name (protocol.Inbox).
func waitSubscribed(t *testing.T, nodes []*redistest.Node, rkey string) {
	t.Helper()
	redistest.WaitSubscribed(t, protocol.Inbox(rkey, "*"), nodes...)
}

// waitCalls waits until every node ran cmd at least n times since its
// statistics were reset, or fails the test after 5 s.
func waitCalls(t *testing.T, nodes []*redistest.Node, cmd string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		all := true
		for _, node := range nodes {
			if calls(t, node, cmd) < n {
				all = false
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not run %d times on every node after 5 s", cmd, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// awaitLock waits for a lockResult, for at most bound past from, and fails
// the test unless it holds a lease.
func awaitLock(t *testing.T, done <-chan lockResult, from time.Time, bound time.Duration) strategy.Lease {
	t.Helper()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("waiter's Lock() = %v, want nil", r.err)
		}
		if took := r.at.Sub(from); took > bound {
			t.Errorf("waiter got the lock %v after the release, want within %v", took, bound)
		}
		return r.lease
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("waiter's Lock() has not returned %v after the release", bound+10*time.Second)
		return nil
	}
}

// handOver unlocks the holder's lease a and returns the lease the waiter
// gets from done, failing the test unless a's Unlock succeeds and the
// waiter holds the lock within 5 s of it (awaitLock).
func handOver(t *testing.T, a strategy.Lease, done <-chan lockResult) strategy.Lease {
	t.Helper()
	released := time.Now()
	if err := a.Unlock(context.Background()); err != nil {
		t.Fatalf("holder's Unlock() = %v, want nil", err)
	}
	return awaitLock(t, done, released, 5*time.Second)
}

// waitBehind starts n nodes, a holder's Locker that takes "k" for a
// minute, and a waiter's Locker whose Retry waits an hour, whose Lock of
// "k" (bounded by a minute) is subscribed on every node when waitBehind
// returns the holder's lease and the channel of the waiter's result.
func waitBehind(t *testing.T, n int) ([]*redistest.Node, strategy.Lease, <-chan lockResult) {
	t.Helper()
	nodes := startNodes(t, n)
	holder := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: time.Minute}})
	waiter := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{Retry: strategy.Fixed(time.Hour)}})
	a := mustLock(t, holder, "k")
	done := lockAsync(waiter, "k", time.Minute)
	waitSubscribed(t, nodes, protocol.LockKey("lock:", "k"))
	return nodes, a, done
}

// TestRemoteWaiterWokenByNotice: a waiter in another Locker whose Retry
// waits an hour, and whose holder has a 60 s TTL, gets the lock promptly
// after Unlock: the release notices the nodes publish wake it. Its fence is
// above the holder's.
func TestRemoteWaiterWokenByNotice(t *testing.T) {
	ctx := context.Background()
	_, a, done := waitBehind(t, 5)

	b := handOver(t, a, done)
	if b.Fence() <= a.Fence() {
		t.Errorf("waiter's Fence() = %d, want above the holder's %d", b.Fence(), a.Fence())
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("waiter's Unlock() = %v, want nil", err)
	}
}

// TestListeningWaiterSleeps: a waiter in another Locker, whose Retry waits
// an hour, listens on every node while the holder keeps the lock for 2 ×
// LineListened: every node saw its Locker listening, so it attempts about
// once per LineListened/2 to keep its place (each attempt asks every node
// whether its Locker listens: one PUBSUB NUMSUB), not once per
// LineStale/2, and the release still wakes it at once.
func TestListeningWaiterSleeps(t *testing.T) {
	ctx := context.Background()
	nodes, a, done := waitBehind(t, 3)
	waitCalls(t, nodes, "pubsub|numsub", 2) // the attempts before and just after it subscribed
	time.Sleep(redlock.LineStale / 2)
	start := time.Now()
	resetStats(t, nodes)
	time.Sleep(2 * redlock.LineListened)
	got := make([]int, len(nodes))
	for i, n := range nodes {
		got[i] = calls(t, n, "pubsub|numsub")
	}
	// The window is measured, not assumed: a loaded machine oversleeps.
	// Attempts at least LineListened/2 apart fit at most window/(LL/2)+1
	// times in it; one per LineStale/2 would be 4 times as many.
	window := time.Since(start)
	most := int(window/(redlock.LineListened/2)) + 1
	for i := range nodes {
		assert.LessOrEqual(t, got[i], most, "node %d: waiter's attempts in %v while listening, want at most one per LineListened/2", i, window)
	}
	b := handOver(t, a, done)
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("waiter's Unlock() = %v, want nil", err)
	}
}

// TestRefusalOfAHeldLockReadsNoLine: a waiter's attempts on a held lock
// join the line without reading its head (no ZRANGE, no ZSCORE: the
// release that frees the lock reads it), and only the first, which makes
// the line, sets its keys' expiry (two PEXPIREs); the second finds enough
// left with one PTTL. Each refusal to a waiter runs PUBSUB NUMSUB once.
// A join renews the expiry once LineListened passed since the last
// renewal, so a loaded machine that reads the counts later than that
// allows a pair per LineListened elapsed since the first attempt.
func TestRefusalOfAHeldLockReadsNoLine(t *testing.T) {
	ctx := context.Background()
	nodes := startNodes(t, 3)
	holder := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: time.Minute}})
	waiter := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{Retry: strategy.Fixed(time.Hour)}})
	a := mustLock(t, holder, "k")
	start := time.Now()
	done := lockAsync(waiter, "k", time.Minute)
	waitSubscribed(t, nodes, protocol.LockKey("lock:", "k"))
	waitCalls(t, nodes, "pubsub|numsub", 2) // the attempts before and just after it subscribed
	c := make([][]int, len(nodes))
	for i, n := range nodes {
		c[i] = callsOf(t, n, "pubsub|numsub", "zrange", "zscore", "pexpire")
	}
	elapsed := time.Since(start)
	most := 2 * (1 + int(elapsed/redlock.LineListened))
	for i := range nodes {
		attempts := c[i][0]
		require.GreaterOrEqual(t, attempts, 2, "node %d: refusals", i)
		assert.Zero(t, c[i][1], "node %d: ZRANGE calls over %d refusals of a held lock", i, attempts)
		assert.Zero(t, c[i][2], "node %d: ZSCORE calls over %d refusals of a held lock", i, attempts)
		assert.GreaterOrEqual(t, c[i][3], 2, "node %d: PEXPIRE calls over %d refusals, want 2 (the line's two keys, when the first made them)", i, attempts)
		assert.LessOrEqual(t, c[i][3], most, "node %d: PEXPIRE calls over %d refusals in %v, want 2 per LineListened begun (the first made the line's two keys)", i, attempts, elapsed)
	}
	b := handOver(t, a, done)
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("waiter's Unlock() = %v, want nil", err)
	}
}

// TestBusyHint: TryLock on a held key reports the holder's remaining TTL
// (an *engine.BusyError, which matches strategy.ErrNotAcquired). A holder
// with a 1 s TTL dies without releasing (no notice is published); a
// waiter whose Retry waits an hour gets the lock shortly after the TTL ran
// out, thanks to that hint: within three more TTLs, room for a loaded
// machine and still far from the hour.
func TestBusyHint(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	const ttl = time.Second
	holder := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: ttl}})
	waiter := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{Retry: strategy.Fixed(time.Hour)}})
	a, err := holder.TryLock(ctx, "k") // never released: the holder "dies"
	require.NoError(t, err, "holder's TryLock()")
	taken := time.Now()

	_, err = waiter.TryLock(ctx, "k")
	var busy *engine.BusyError
	require.ErrorAs(t, err, &busy, "TryLock() on the held key")
	require.ErrorIs(t, err, strategy.ErrNotAcquired, "TryLock() on the held key")
	assert.Positive(t, busy.Remaining, "BusyError.Remaining")
	assert.LessOrEqual(t, busy.Remaining, ttl, "BusyError.Remaining")

	done := lockAsync(waiter, "k", time.Minute)
	b := awaitLock(t, done, taken, 4*ttl)
	assert.Greater(t, b.Fence(), a.Fence(), "waiter's Fence(), want above the dead holder's")
	assert.NoError(t, b.Unlock(ctx), "waiter's Unlock()")
}

// TestLocksWhileSubscribed: the release notices' subscription connections
// come from the same pools as the lock commands. While a waiter of a
// Locker with Quorum 5 is subscribed on every node, the same Locker takes
// and releases other keys 200 times. Each pair must succeed, which with
// Quorum 5 means that no node's call failed (a connection handed out while
// still subscribed would refuse the commands) and that the restart guard
// left no node out; every node must have run exactly 400 scripts, each
// pipelined with CLIENT GETNAME. The waiter then still gets its key
// promptly after the release, and the Locker keeps working afterwards.
func TestLocksWhileSubscribed(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	holder := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: time.Minute}})
	l := newLocker(t, nodes, redlock.Config{Quorum: 5, NodeTimeout: patient, Config: strategy.Config{Retry: strategy.Fixed(time.Hour)}})
	warm := mustLock(t, l, "warm") // every node's run_id known, named connections pooled
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)

	a := mustLock(t, holder, "k")
	resetStats(t, nodes)
	done := lockAsync(l, "k", time.Minute)
	waitSubscribed(t, nodes, protocol.LockKey("lock:", "k"))
	// The waiter's two attempts (one before it subscribed, one just after)
	// have run on every node, each refusal asking whether its Locker
	// listens (PUBSUB NUMSUB); it now sleeps until a notice, or
	// LineStale/2 (it keeps its place in line).
	waitCalls(t, nodes, "pubsub|numsub", 2)
	waitIdle(t, l)
	alignFences(t, nodes, "other") // no write-back round: only the acquire and release scripts run
	resetStats(t, nodes)
	const pairs = 200
	for i := range pairs {
		lease, err := l.TryLock(ctx, "other")
		if err != nil {
			t.Fatalf("pair %d: TryLock() while a waiter is subscribed = %v, want nil", i, err)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("pair %d: Unlock() while a waiter is subscribed = %v, want nil", i, err)
		}
	}
	waitIdle(t, l)
	for i, n := range nodes {
		// The waiter attempts every LineStale/2 to keep its place in line;
		// each of its refusals runs PUBSUB NUMSUB (the pairs' scripts, with
		// no line to serve, never do).
		c := callsOf(t, n, "pubsub|numsub", "evalsha", "client|getname")
		kept := c[0]
		if got, want := c[1], 2*pairs+kept; got != want {
			t.Errorf("EVALSHA calls on node %d = %d, want %d (an acquire and a release per pair, and %d waiter attempts)", i, got, want, kept)
		}
		if got, want := c[2], 2*pairs+kept; got != want {
			t.Errorf("CLIENT GETNAME calls on node %d = %d, want %d (one pipelined with each script)", i, got, want)
		}
	}

	b := handOver(t, a, done)
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("waiter's Unlock() = %v, want nil", err)
	}
	for i := range 20 { // the subscription connections are gone, not pooled in subscribed state
		lease, err := l.TryLock(ctx, "other")
		if err != nil {
			t.Fatalf("pair %d after the waiter left: TryLock() = %v, want nil", i, err)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("pair %d after the waiter left: Unlock() = %v, want nil", i, err)
		}
	}
}

// TestBusyHintOwnLeftover: keys that hold the attempt's own token are
// leftovers of an earlier attempt of the same Lock call, released in the
// background without a notice. They refuse the attempt, but the hint is
// NodeTimeout at most, not their TTL, so that the waiter does not sleep
// through its own clean-up. The call's name is unique (Config.Token's
// value and random characters), so the leftovers are written with the
// name the attempt carries on the wire, just before it is sent.
func TestBusyHintOwnLeftover(t *testing.T) {
	nodes := startNodes(t, 5)
	const nodeTimeout = 300 * time.Millisecond
	lo := &leftovers{t: t, on: nodes[:3]}
	pools := make([]strategy.Pool, len(nodes))
	for i, n := range nodes {
		pools[i] = leftoverPool{n.Pool(), lo}
	}
	l, err := redlock.New(pools, redlock.Config{NodeTimeout: nodeTimeout, Config: strategy.Config{Token: func() string { return "me" }}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	t.Cleanup(func() { waitIdle(t, l) })
	_, err = l.TryLock(context.Background(), "k")
	var busy *engine.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("TryLock() over its own leftovers = %v, want an *engine.BusyError", err)
	}
	if busy.Remaining <= 0 || busy.Remaining > nodeTimeout {
		t.Errorf("BusyError.Remaining = %v, want within (0, %v] (NodeTimeout, not the leftovers' TTL)", busy.Remaining, nodeTimeout)
	}
}

// leftovers writes, once, before the first acquire script is sent to any
// node, the call's own name (the script's ARGV[3]; a TryLock's token) at
// the lock's key (its KEYS[1], whatever the layout) on the nodes on, with
// a 60 s TTL.
type leftovers struct {
	t    *testing.T
	on   []*redistest.Node
	once sync.Once
}

// saw is called with every command before it is sent.
func (lo *leftovers) saw(cmd string, args []any) {
	// The acquire script: EVALSHA/EVAL hash, 4, the lock and 3 more keys,
	// the token, the TTL, the call's name, ...
	if (cmd != "EVALSHA" && cmd != "EVAL") || len(args) < 9 || args[1] != any(4) {
		return
	}
	lo.once.Do(func() {
		for _, n := range lo.on {
			if _, err := n.Do("SET", args[2], args[8], "PX", 60000); err != nil {
				lo.t.Errorf("SET on %s = %v, want nil", n.Addr(), err)
			}
		}
	})
}

// leftoverPool lends a node's connections, showing leftovers every
// command before it is sent.
type leftoverPool struct {
	pool *redis.Pool
	lo   *leftovers
}

func (p leftoverPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return c, err
	}
	return leftoverConn{c, p.lo}, nil
}

// leftoverConn is a connection of leftoverPool; it keeps redigo's read
// deadlines (redis.ConnWithTimeout).
type leftoverConn struct {
	redis.Conn
	lo *leftovers
}

func (c leftoverConn) Do(cmd string, args ...any) (any, error) {
	c.lo.saw(cmd, args)
	return c.Conn.Do(cmd, args...)
}

func (c leftoverConn) Send(cmd string, args ...any) error {
	c.lo.saw(cmd, args)
	return c.Conn.Send(cmd, args...)
}

func (c leftoverConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	c.lo.saw(cmd, args)
	return redis.DoWithTimeout(c.Conn, d, cmd, args...)
}

func (c leftoverConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, d)
}

package peers_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestTryLockHeld: a held key refuses TryLock with ErrNotAcquired; the
// holder's Unlock frees it; a second Unlock of the same lease is ErrNotHeld.
func TestTryLockHeld(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		a := build(t, c, nodes, strategy.Config{})
		b := build(t, c, nodes, strategy.Config{})
		held := lockWithin(t, a, "k")
		if _, err := b.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("TryLock() of a held key = %v, want %v", err, strategy.ErrNotAcquired)
		}
		if err := held.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() = %v, want nil", err)
		}
		if err := held.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
			t.Errorf("second Unlock() = %v, want %v", err, strategy.ErrNotHeld)
		}
		next, err := b.TryLock(ctx, "k")
		if err != nil {
			t.Fatalf("TryLock() after Unlock = %v, want nil", err)
		}
		if got := next.Key(); got != "k" {
			t.Errorf("Key() = %q, want %q", got, "k")
		}
		if next.Fence() != 0 {
			t.Errorf("Fence() = %d, want 0 (no peer issues fencing tokens)", next.Fence())
		}
		if d := time.Until(next.Deadline()); d <= 0 || d > strategy.DefaultTTL {
			t.Errorf("Deadline() is %v from now, want within (0, %v]", d, strategy.DefaultTTL)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Errorf("Unlock() = %v, want nil", err)
		}
	})
}

// TestLockWaitsAndGivesUp: Lock waits for a release; on a key that stays
// held it gives up when ctx ends, with ErrNotAcquired and ctx's error.
func TestLockWaitsAndGivesUp(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		a := build(t, c, nodes, strategy.Config{})
		b := build(t, c, nodes, strategy.Config{})
		held := lockWithin(t, a, "k")

		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := b.Lock(short, "k")
		cancel()
		if !errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock() of a held key = %v, want %v and %v", err, strategy.ErrNotAcquired, context.DeadlineExceeded)
		}

		got := make(chan error, 1)
		go func() { // ends when Lock returns, within its 10 s bound
			wait, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			lease, err := b.Lock(wait, "k")
			if err == nil {
				err = lease.Unlock(ctx)
			}
			got <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := held.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() = %v, want nil", err)
		}
		err = <-got
		switch {
		case err == nil:
		case c.missesWakeups && errors.Is(err, strategy.ErrNotAcquired) && errors.Is(err, context.DeadlineExceeded):
			t.Logf("finding, not a failure: the waiting Lock missed the release and waited out its context: %v", err)
		default:
			t.Errorf("waiting Lock() then Unlock() = %v, want nil", err)
		}
	})
}

// TestCrashFreesAfterTTL: a holder that never unlocks loses the lock when
// the TTL passes, and a waiter gets it. A peer whose waiting Lock can miss
// the wake-up (missesWakeups) may wait out its context instead: that is a
// finding, and the lock must then be free to a TryLock.
func TestCrashFreesAfterTTL(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		l := build(t, c, nodes, strategy.Config{TTL: 500 * time.Millisecond})
		_ = lockWithin(t, l, "k") // dropped, never unlocked
		if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("TryLock() right after the crash = %v, want %v", err, strategy.ErrNotAcquired)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		lease, err := l.Lock(wctx, "k")
		if err != nil && c.missesWakeups && errors.Is(err, strategy.ErrNotAcquired) && errors.Is(err, context.DeadlineExceeded) {
			t.Logf("finding, not a failure: the waiting Lock missed the expiry and waited out its context: %v", err)
			lease, err = l.TryLock(ctx, "k")
		}
		if err != nil {
			t.Fatalf("Lock(\"k\") after the holder's TTL = %v, want nil", err)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Errorf("Unlock() = %v, want nil", err)
		}
	})
}

// TestStaleRelease: A's lock expires and B takes it; A's late Unlock must
// leave B's lock in place (every peer claims OwnerSafeRelease), and says
// ErrNotHeld where the peer's release reports it.
func TestStaleRelease(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		l := build(t, c, nodes, strategy.Config{TTL: 300 * time.Millisecond})
		if !l.Properties().OwnerSafeRelease {
			t.Fatalf("%s does not claim OwnerSafeRelease; this test assumes it", c.target.Name)
		}
		a := lockWithin(t, l, "k")
		// B comes once A's lock expired; a peer whose waiting Lock can
		// miss the wake-up (missesWakeups) may wait out its context
		// instead, a finding, and then B takes the free key with TryLock.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		b, err := l.Lock(wctx, "k")
		if err != nil && c.missesWakeups && errors.Is(err, strategy.ErrNotAcquired) && errors.Is(err, context.DeadlineExceeded) {
			t.Logf("finding, not a failure: the waiting Lock missed the expiry and waited out its context: %v", err)
			b, err = l.TryLock(ctx, "k")
		}
		if err != nil {
			t.Fatalf("B's Lock(\"k\") after A's TTL = %v, want nil", err)
		}
		err = a.Unlock(ctx)
		if c.seesLossAtOnce && !errors.Is(err, strategy.ErrNotHeld) {
			t.Errorf("stale Unlock() = %v, want %v", err, strategy.ErrNotHeld)
		}
		if c.extends {
			if err := a.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("stale Extend() = %v, want %v", err, strategy.ErrNotHeld)
			}
		}
		if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
			t.Errorf("TryLock() after A's stale Unlock = %v, want %v (B's lock kept)", err, strategy.ErrNotAcquired)
		}
		if err := b.Unlock(ctx); err != nil {
			t.Errorf("B Unlock() = %v, want nil", err)
		}
	})
}

// TestExtend: where the peer extends, the Deadline and the key's expiry
// move; after Unlock, Extend is ErrNotHeld. rueidislock: ErrUnsupported.
func TestExtend(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		const prefix = "extend:"
		l := build(t, c, nodes, strategy.Config{TTL: time.Second, Prefix: prefix})
		lease := lockWithin(t, l, "k")
		before := lease.Deadline()
		err := lease.Extend(ctx, 5*time.Second)
		if !c.extends {
			if !errors.Is(err, strategy.ErrUnsupported) {
				t.Errorf("Extend() = %v, want %v", err, strategy.ErrUnsupported)
			}
			return
		}
		if err != nil {
			t.Fatalf("Extend() = %v, want nil", err)
		}
		if after := lease.Deadline(); !after.After(before.Add(3 * time.Second)) {
			t.Errorf("Deadline() after Extend(5s) = %v, want later than %v", after, before.Add(3*time.Second))
		}
		held := lockKeys(t, nodes[0], prefix)
		require.NotEmpty(t, held, "keys under %q on node 1 while the lock is held", prefix)
		for k, pttl := range held {
			assert.Greater(t, pttl, int64(3000), "PTTL %s after Extend(5s), ms", k)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Errorf("Unlock() = %v, want nil", err)
		}
		if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
			t.Errorf("Extend() after Unlock = %v, want %v", err, strategy.ErrNotHeld)
		}
	})
}

// TestKeysUnderPrefix: what a peer writes starts with Config.Prefix and
// expires; a release leaves nothing behind.
func TestKeysUnderPrefix(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		const prefix = "peers-test:"
		l := build(t, c, nodes, strategy.Config{Prefix: prefix})
		lease := lockWithin(t, l, "k")
		for i, node := range nodes {
			all := keys(t, node)
			if len(all) == 0 && i == 0 {
				t.Errorf("node %d holds no key while the lock is held", i+1)
			}
			for k, pttl := range all {
				if !strings.HasPrefix(k, prefix) {
					t.Errorf("node %d: key %q does not start with the prefix %q", i+1, k, prefix)
				}
				if pttl <= 0 {
					t.Errorf("node %d: PTTL %s = %d, want an expiry", i+1, k, pttl)
				}
			}
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() = %v, want nil", err)
		}
		for i, node := range nodes {
			if left := keys(t, node); len(left) > 0 {
				t.Errorf("node %d after Unlock holds %v, want nothing", i+1, left)
			}
		}
	})
}

// TestKilledNode: with a majority of the nodes dead (the one node of a
// single-node peer, 3 of redsync_redlock's 5), TryLock is a Redis failure,
// not ErrNotAcquired; Lock gives up at ctx's end with ErrNotAcquired; and
// Unlock of a lease taken before fails (a peer that claims it, with a
// Redis failure rather than ErrNotHeld). A minority's death is
// TestRedlockFrozenMinority's matter.
func TestKilledNode(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		// A short TTL: rueidislock's failed acquire waits, past ctx, for its
		// clean-up of the key, which is bounded by the TTL.
		l := build(t, c, nodes, strategy.Config{TTL: time.Second})
		lease := lockWithin(t, l, "held")
		majority := nodes[:len(nodes)/2+1]
		for _, n := range majority {
			n.Kill()
		}
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := l.TryLock(try, "k")
		cancel()
		require.Error(t, err, "TryLock() with %d of %d nodes killed", len(majority), len(nodes))
		assert.NotErrorIs(t, err, strategy.ErrNotAcquired, "TryLock() with %d of %d nodes killed: want a Redis failure", len(majority), len(nodes))
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = l.Lock(short, "k")
		cancel()
		assert.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock() with %d of %d nodes killed", len(majority), len(nodes))
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Lock() with %d of %d nodes killed", len(majority), len(nodes))
		unlock, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = lease.Unlock(unlock)
		cancel()
		require.Error(t, err, "Unlock() with %d of %d nodes killed", len(majority), len(nodes))
		if c.unlockFailsOnDeadNode {
			assert.NotErrorIs(t, err, strategy.ErrNotHeld, "Unlock() with %d of %d nodes killed: want a Redis failure", len(majority), len(nodes))
		}
	})
}

// TestRedlockFrozenMinority: redsync on 5 nodes, one frozen: TryLock still
// gets a quorum and returns, because the adapter's pools end each command
// at the deadline redsync gives it (its redigo driver alone ignores it and
// would wait for the frozen node forever).
func TestRedlockFrozenMinority(t *testing.T) {
	noLeaks(t)
	nodes := redistest.Start(t, peers.RedlockNodes)
	l, err := peers.NewRedsync(pools(nodes), strategy.Config{})
	if err != nil {
		t.Fatalf("NewRedsync() = %v, want nil", err)
	}
	t.Cleanup(func() { closeLocker(t, l) })
	ctx := context.Background()
	warm := lockWithin(t, l, "warm") // every node dialed and its scripts loaded
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	nodes[len(nodes)-1].Pause()
	t.Cleanup(nodes[len(nodes)-1].Resume)
	type result struct {
		lease strategy.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() { // ends when TryLock returns; the node resumes at cleanup
		lease, err := l.TryLock(ctx, "k")
		got <- result{lease, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("TryLock() with 1 of %d nodes frozen = %v, want nil", len(nodes), r.err)
		}
		unlock, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := r.lease.Unlock(unlock); err != nil {
			t.Errorf("Unlock() with 1 of %d nodes frozen = %v, want nil", len(nodes), err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("TryLock() with 1 of %d nodes frozen has not returned after 30s, want a quorum", len(nodes))
	}
}

// TestInvalidInput: bad configs and empty keys wrap ErrInvalidConfig.
func TestInvalidInput(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		for _, cfg := range []strategy.Config{{TTL: -time.Second}, {TTL: 500 * time.Microsecond}} {
			if l, err := c.target.New(pools(nodes), cfg); !errors.Is(err, strategy.ErrInvalidConfig) {
				if l != nil {
					closeLocker(t, l)
				}
				t.Errorf("New(TTL %v) = %v, want %v", cfg.TTL, err, strategy.ErrInvalidConfig)
			}
		}
		if _, err := c.target.New(nil, strategy.Config{}); !errors.Is(err, strategy.ErrInvalidConfig) {
			t.Errorf("New(no pools) = %v, want %v", err, strategy.ErrInvalidConfig)
		}
		l := build(t, c, nodes, strategy.Config{})
		if _, err := l.TryLock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
			t.Errorf("TryLock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
		}
		if _, err := l.Lock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
			t.Errorf("Lock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
		}
	})
}

// TestClosed: after Close, calls wrap ErrClosed; Close again is nil.
func TestClosed(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		l, err := c.target.New(pools(nodes), strategy.Config{})
		if err != nil {
			t.Fatalf("New() = %v, want nil", err)
		}
		closeLocker(t, l)
		closeLocker(t, l)
		if _, err := l.TryLock(ctx, "k"); !errors.Is(err, peers.ErrClosed) {
			t.Errorf("TryLock() after Close = %v, want %v", err, peers.ErrClosed)
		}
		if _, err := l.Lock(ctx, "k"); !errors.Is(err, peers.ErrClosed) {
			t.Errorf("Lock() after Close = %v, want %v", err, peers.ErrClosed)
		}
	})
}

// TestRetryPolicy: a Config.Retry that stops ends Lock at once with
// ErrNotAcquired, for every peer.
func TestRetryPolicy(t *testing.T) {
	noLeaks(t)
	forEach(t, func(t *testing.T, c peerCase, nodes []*redistest.Node) {
		ctx := context.Background()
		holder := build(t, c, nodes, strategy.Config{})
		held := lockWithin(t, holder, "k")
		l := build(t, c, nodes, strategy.Config{Retry: strategy.NoRetry()})
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := l.Lock(wait, "k")
		if !errors.Is(err, strategy.ErrNotAcquired) || wait.Err() != nil {
			t.Errorf("Lock() under NoRetry = %v (ctx %v), want %v before ctx ends", err, wait.Err(), strategy.ErrNotAcquired)
		}
		if err := held.Unlock(ctx); err != nil {
			t.Errorf("Unlock() = %v, want nil", err)
		}
	})
}

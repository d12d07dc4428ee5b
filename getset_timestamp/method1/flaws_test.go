package method1_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// deleteOnCleanup deletes key from node when the test ends: method 1's
// keys never expire, so a test must remove what it leaves.
func deleteOnCleanup(t *testing.T, node *redistest.Node, key string) {
	t.Helper()
	t.Cleanup(func() {
		if _, err := node.Do("DEL", key); err != nil {
			t.Errorf("cleanup DEL %s = %v, want nil", key, err)
		}
	})
}

// checkStuck fails the test unless key still holds the article's 1 with no
// expiry, and a Lock by another Locker gives up with ErrNotAcquired.
func checkStuck(t *testing.T, node *redistest.Node, other strategy.Locker, key string) {
	t.Helper()
	if got := locktest.Get(t, node, "lock:"+key); got != "1" {
		t.Errorf("GET lock:%s = %q, want %q (still held)", key, got, "1")
	}
	if ttl, err := redis.Int64(node.Do("PTTL", "lock:"+key)); err != nil || ttl != -1 {
		t.Errorf("PTTL lock:%s = %d, %v; want -1 (it never expires)", key, ttl, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if lease, err := other.Lock(ctx, key); !errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		if lease != nil {
			_ = lease.Unlock(context.Background())
		}
		t.Errorf("Lock() by another client = %v, want %v and %v: nobody is left to release the lock", err, strategy.ErrNotAcquired, context.DeadlineExceeded)
	}
}

// TestDeadHolderKeepsLockForever is the article's own objection to method
// 1: a holder that dies before its DEL leaves the lock held for good. The
// TTL (100 ms) has long passed and another client still cannot lock.
func TestDeadHolderKeepsLockForever(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	deleteOnCleanup(t, node, "lock:k")
	cfg := strategy.Config{TTL: 100 * time.Millisecond}
	holder := locktest.MustNew(t, factory, node.Pool(), cfg)
	other := locktest.MustNew(t, factory, node.Pool(), cfg)

	// The holder dies right after its SETNX succeeded.
	ctx := fault.With(context.Background(), fault.Crash(fault.AcquireAfter))
	if _, err := holder.TryLock(ctx, "k"); !errors.Is(err, fault.ErrCrashed) {
		t.Fatalf("TryLock() by the holder = %v, want %v", err, fault.ErrCrashed)
	}
	time.Sleep(300 * time.Millisecond) // three TTLs: any expiry would have run
	checkStuck(t, node, other, "k")
}

// TestLostReplyKeepsLockForever: a SETNX whose reply is lost has set the
// key, and the Locker does not take it back (its DEL checks no owner and
// could delete another holder's lock): the lock is held by nobody, for good.
func TestLostReplyKeepsLockForever(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	deleteOnCleanup(t, node, "lock:k")
	proxy := redistest.NewProxy(t, node.Addr())
	cfg := strategy.Config{TTL: 100 * time.Millisecond}
	lost := locktest.MustNew(t, factory, proxy.Pool(), cfg)
	other := locktest.MustNew(t, factory, node.Pool(), cfg)

	proxy.DropNextReplies(1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if lease, err := lost.TryLock(ctx, "k"); err == nil {
		_ = lease.Unlock(context.Background())
		t.Fatalf("TryLock() whose reply was dropped = nil, want an error")
	}
	checkStuck(t, node, other, "k")
}

// TestAnyDELReleases shows that the lock has no owner: any client's DEL
// (the article's `delete(lock_key)`, run by another process) frees A's
// lock, B takes it, and A's Unlock, a plain DEL too, then deletes B's lock
// and reports success, so C takes it while B still holds it.
func TestAnyDELReleases(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	deleteOnCleanup(t, node, "lock:k")
	ctx := context.Background()
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Minute})

	// A holder is in its critical section from the TryLock that returned
	// its lease until its Unlock; the leases last a minute, so none ends
	// meanwhile.
	var overlap locktest.Overlap
	a, err := l.TryLock(ctx, "k")
	require.NoError(t, err, "TryLock() by A")
	overlap.Enter()
	locktest.MustDo(t, node, "DEL", "lock:k") // another client's release
	b, err := l.TryLock(ctx, "k")
	if err == nil {
		overlap.Enter() // B's TryLock let it in while A, not unlocked, is inside
	}
	assert.EqualValues(t, 1, overlap.Violations(), "holders inside at once after B's TryLock = %v, want 1 (A and B)", err)
	require.NoError(t, err, "TryLock() by B after another client's DEL, want nil (the DEL freed A's lock)")
	assert.Equal(t, a.Token(), b.Token(), "A and B Token(), want the same %q: nothing tells holders apart", "1")
	assert.NoError(t, a.Unlock(ctx), "A's Unlock(): its DEL found B's key")
	overlap.Exit()
	c, err := l.TryLock(ctx, "k")
	if err == nil {
		overlap.Enter() // C's TryLock let it in while B, not unlocked, is inside
	}
	assert.EqualValues(t, 2, overlap.Violations(), "holders inside at once after C's TryLock = %v, want 2 (A and B, then B and C)", err)
	require.NoError(t, err, "TryLock() by C while B holds, want nil (A's DEL freed B's lock)")
	for _, lease := range []strategy.Lease{b, c} {
		assert.True(t, time.Now().Before(lease.Deadline()), "Deadline() = %v, want after now: both believe they hold the lock", lease.Deadline())
	}
	assert.NoError(t, b.Unlock(ctx), "B's Unlock(): it deletes C's lock in turn")
	overlap.Exit()
	assert.ErrorIs(t, c.Unlock(ctx), strategy.ErrNotHeld, "C's Unlock(): B's DEL removed the key")
	overlap.Exit()
}

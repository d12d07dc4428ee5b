package setnxex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestStaleReleaseDeletesNewHolder reproduces the article's race: A's GET
// matches, A stalls, its lock expires and B takes it; A's DEL then deletes
// B's lock, A's Unlock reports success, and C acquires while B's Deadline
// has not passed: two holders.
func TestStaleReleaseDeletesNewHolder(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	short := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Second}) // A
	long := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Minute})  // B, C

	a, err := short.TryLock(ctx, "k")
	require.NoError(t, err, "TryLock() by A")
	s := locktest.StopAt(t, fault.SetNXExReleaseAfterGet, a.Unlock) // A's GET matched
	b := lockAfterExpiry(t, long, "k")
	require.Equal(t, b.Token(), locktest.Get(t, node, "lock:k"), "GET lock:k after B's Lock, want B's token")
	// A's lease ended (its Deadline passed) before B's Lock returned. B is
	// in its critical section from its Lock until its Unlock: its Deadline
	// is a minute away.
	var overlap locktest.Overlap
	overlap.Enter()

	assert.NoError(t, s.Resume(), "A's stale Unlock(): its DEL deleted a key, so it sees success")
	assert.Empty(t, locktest.Get(t, node, "lock:k"), "GET lock:k after A's DEL, want no key: A's DEL must have deleted B's lock")

	c, err := long.TryLock(ctx, "k")
	if err == nil {
		overlap.Enter() // C's TryLock let it in while B, not unlocked, is inside
	}
	assert.EqualValues(t, 1, overlap.Violations(), "holders inside at once, want 1: C's TryLock = %v while B had not unlocked", err)
	require.NoError(t, err, "TryLock() by C while B holds, want nil (A's DEL freed B's lock)")
	for _, l := range []strategy.Lease{b, c} {
		assert.True(t, time.Now().Before(l.Deadline()), "lease %s Deadline() = %v, want after now: both believe they hold the lock", l.Token(), l.Deadline())
	}
	assert.Equal(t, c.Token(), locktest.Get(t, node, "lock:k"), "GET lock:k after C's TryLock, want C's token")
	// B learns it lost the lock only when it tries to release it.
	assert.ErrorIs(t, b.Unlock(ctx), strategy.ErrNotHeld, "B's Unlock()")
	overlap.Exit()
	assert.NoError(t, c.Unlock(ctx), "C's Unlock()")
	overlap.Exit()
}

// TestStaleExtendProlongsNewHolder is the extend twin: A's GET matches, A
// stalls, its lock expires and B takes it; A's EXPIRE then sets B's lock's
// lifetime, and A's Deadline moves as if the lock were still A's.
func TestStaleExtendProlongsNewHolder(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	const extendTo = 5 * time.Minute
	short := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Second})     // A
	long := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second}) // B

	a, err := short.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by A = %v, want nil", err)
	}
	s := locktest.StopAt(t, fault.SetNXExExtendAfterGet, func(ctx context.Context) error {
		return a.Extend(ctx, extendTo)
	})
	b := lockAfterExpiry(t, long, "k")

	if err := s.Resume(); err != nil {
		t.Errorf("A's stale Extend(%v) = %v, want nil (its EXPIRE found a key)", extendTo, err)
	}
	if got := locktest.Get(t, node, "lock:k"); got != b.Token() {
		t.Fatalf("GET lock:k after A's EXPIRE = %q, want B's token %q", got, b.Token())
	}
	if got := locktest.PTTL(t, node, "lock:k"); got <= extendTo-time.Minute {
		t.Errorf("PTTL of B's lock after A's EXPIRE = %v, want above %v: A's %v, not B's 10s", got, extendTo-time.Minute, extendTo)
	}
	now := time.Now()
	if d := a.Deadline(); !d.After(now.Add(extendTo - time.Minute)) {
		t.Errorf("A's Deadline() after its stale Extend = %v, want after %v", d, now.Add(extendTo-time.Minute))
	}
	if d := b.Deadline(); !d.After(now) {
		t.Errorf("B's Deadline() = %v, want after now %v: A and B must both believe they hold the lock", d, now)
	}
}

// TestOwnerCheckAtGet shows what the GET does catch: a lock that changed
// hands before the GET is left alone, and a lock that vanished between the
// GET and the DEL or EXPIRE is reported.
func TestOwnerCheckAtGet(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Minute})
	ops := []struct {
		name  string
		point string
		call  func(ctx context.Context, lease strategy.Lease) error
	}{
		{"Unlock", fault.SetNXExReleaseAfterGet, func(ctx context.Context, lease strategy.Lease) error {
			return lease.Unlock(ctx)
		}},
		{"Extend", fault.SetNXExExtendAfterGet, func(ctx context.Context, lease strategy.Lease) error {
			return lease.Extend(ctx, time.Minute)
		}},
	}
	for _, op := range ops {
		t.Run(op.name+" after takeover", func(t *testing.T) {
			ctx := context.Background()
			key := "taken-" + op.name
			a := mustTryLock(t, l, key)
			locktest.MustDo(t, node, "DEL", "lock:"+key) // as if it expired
			b := mustTryLock(t, l, key)
			if err := op.call(ctx, a); !errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("A's %s() = %v, want %v", op.name, err, strategy.ErrNotHeld)
			}
			if got := locktest.Get(t, node, "lock:"+key); got != b.Token() {
				t.Errorf("GET lock:%s = %q, want B's token %q", key, got, b.Token())
			}
		})
		t.Run(op.name+" when the key vanishes after GET", func(t *testing.T) {
			key := "vanished-" + op.name
			a := mustTryLock(t, l, key)
			s := locktest.StopAt(t, op.point, func(ctx context.Context) error { return op.call(ctx, a) })
			locktest.MustDo(t, node, "DEL", "lock:"+key)
			if err := s.Resume(); !errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("A's %s() = %v, want %v", op.name, err, strategy.ErrNotHeld)
			}
			if got := locktest.Get(t, node, "lock:"+key); got != "" {
				t.Errorf("GET lock:%s = %q, want no key", key, got)
			}
		})
	}
}

// lockAfterExpiry takes key through l, waiting (at most 10 s) for the
// current holder's lock to expire.
func lockAfterExpiry(t *testing.T, l strategy.Locker, key string) strategy.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lease, err := l.Lock(ctx, key)
	if err != nil {
		t.Fatalf("Lock(%q) by B = %v, want nil once A's lock expired", key, err)
	}
	return lease
}

// mustTryLock takes key through l or fails the test.
func mustTryLock(t *testing.T, l strategy.Locker, key string) strategy.Lease {
	t.Helper()
	lease, err := l.TryLock(context.Background(), key)
	if err != nil {
		t.Fatalf("TryLock(%q) = %v, want nil", key, err)
	}
	return lease
}

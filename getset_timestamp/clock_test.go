package getsettimestamp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestClockAhead shows that clocks decide: a client whose clock runs a
// minute ahead sees a live lock's time as passed and takes it over with
// GETSET while its holder is still inside its Deadline. Two leases are held
// at once.
func TestClockAhead(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	holder := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
	ahead := newLocker(t, node, strategy.Config{TTL: 10 * time.Second, Clock: skewed(time.Minute)})

	first, err := holder.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("holder TryLock() = %v, want nil", err)
	}
	second, err := ahead.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by the client a minute ahead = %v, want nil (it takes the live lock over)", err)
	}
	if now := time.Now(); !first.Deadline().After(now) {
		t.Errorf("holder Deadline() = %v, want after now %v: both leases must be live", first.Deadline(), now)
	}
	if got := locktest.Get(t, node, "lock:k"); got != second.Token() {
		t.Errorf("GET lock:k = %q, want the second holder's time %q", got, second.Token())
	}
}

// TestClockBehind shows the stale release: a client whose clock runs a
// minute behind writes an expiry time that has already passed by real
// time, so another client takes the lock over; the first client's Unlock
// still sees its own time as live by its clock and deletes the next
// holder's lock.
func TestClockBehind(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	behind := newLocker(t, node, strategy.Config{TTL: 10 * time.Second, Clock: skewed(-time.Minute)})
	next := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})

	stale, err := behind.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by the client a minute behind = %v, want nil", err)
	}
	if exp, now := stampOf(t, stale.Token()), time.Now().UnixMilli(); exp >= now {
		t.Fatalf("stored time %d, want already passed by real time %d", exp, now)
	}
	holder, err := next.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by the next client = %v, want nil (the stored time has passed)", err)
	}
	if err := stale.Unlock(ctx); err != nil {
		t.Fatalf("stale Unlock() = %v, want nil (its own clock says its time has not passed)", err)
	}
	if exists(t, node, "lock:k") {
		t.Errorf("EXISTS lock:k after the stale Unlock = 1, want 0: the next holder's lock is deleted")
	}
	if err := holder.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("next holder Unlock() = %v, want %v (its lock was deleted)", err, strategy.ErrNotHeld)
	}
}

// TestUnlockAfterOwnTime checks the article's release rule from the other
// side: once the client's own clock says its time has passed, Unlock leaves
// the key alone and reports ErrNotHeld.
func TestUnlockAfterOwnTime(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	var offset atomic.Int64 // nanoseconds the client's clock is moved ahead
	l := newLocker(t, node, strategy.Config{
		TTL:   10 * time.Second,
		Clock: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) },
	})
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	offset.Store(int64(time.Minute))
	if err := lease.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Unlock() after the client's clock passed its time = %v, want %v", err, strategy.ErrNotHeld)
	}
	if got := locktest.Get(t, node, "lock:k"); got != lease.Token() {
		t.Errorf("GET lock:k = %q, want %q (left alone)", got, lease.Token())
	}
}

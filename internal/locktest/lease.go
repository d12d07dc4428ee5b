// The conformance checks of the lease rules: what spends a lease, and
// what colliding Config.Token values may not do.

package locktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// failedUnlockTries is how many leases testFailedUnlock spends on each
// kind of failure.
const failedUnlockTries = 50

// testFailedUnlock: an Unlock or Extend that fails without an answer from
// Redis (its context had ended, the pool failed) does not spend the
// lease: the same lease's next Unlock releases the lock. Only success and
// ErrNotHeld spend a lease.
func testFailedUnlock(t *testing.T, f Factory, node *redistest.Node) {
	pool := NewFaultyPool(node.Pool())
	l := MustNew(t, f, pool, strategy.Config{TTL: 10 * time.Second})
	other := MustNew(t, f, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	failures := []struct {
		name   string
		want   error // what the failed call must match
		extend bool  // the call is an Extend
		fail   func(lease strategy.Lease) error
	}{
		{"Unlock with an ended context", context.Canceled, false, func(lease strategy.Lease) error {
			return lease.Unlock(dead)
		}},
		{"Unlock with a failing pool", ErrInjected, false, func(lease strategy.Lease) error {
			pool.FailNext(1)
			return lease.Unlock(context.Background())
		}},
		{"Extend with an ended context", context.Canceled, true, func(lease strategy.Lease) error {
			return lease.Extend(dead, 0)
		}},
		{"Extend with a failing pool", ErrInjected, true, func(lease strategy.Lease) error {
			pool.FailNext(1)
			return lease.Extend(context.Background(), 0)
		}},
	}
	for _, fl := range failures {
		t.Run(fl.name, func(t *testing.T) {
			if fl.extend && !extends(l.Properties()) {
				t.Skip("technique has no Extend")
			}
			held := 0 // leases whose lock stayed held after the retried Unlock
			for i := range failedUnlockTries {
				key := "failed-" + strconv.Itoa(i)
				lease := mustLock(t, l, key)
				err := fl.fail(lease)
				if !errors.Is(err, fl.want) || errors.Is(err, strategy.ErrNotHeld) {
					t.Fatalf("failed call = %v, want %v and not %v", err, fl.want, strategy.ErrNotHeld)
				}
				if err := lease.Unlock(context.Background()); err != nil {
					t.Errorf("Unlock() after the failed call = %v, want nil (the lease is not spent)", err)
				}
				if freed, err := other.TryLock(context.Background(), key); err != nil {
					held++
				} else if err := freed.Unlock(context.Background()); err != nil {
					t.Errorf("Unlock() by another client = %v, want nil", err)
				}
			}
			t.Logf("%s: %d of %d locks left held after the retried Unlock", fl.name, held, failedUnlockTries)
			if held != 0 {
				t.Errorf("locks left held after a failed call and a retried Unlock = %d of %d, want 0", held, failedUnlockTries)
			}
		})
	}
}

// sharedToken is what both Lockers' Config.Token returns in
// testSharedToken: a host name, as users put in tokens.
const sharedToken = "host-1"

// testSharedToken: two Lockers whose Config.Token returns the same string
// never both hold a key, and one never releases the other's lock.
func testSharedToken(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	named := func(ttl time.Duration) strategy.Locker {
		return MustNew(t, f, node.Pool(), strategy.Config{TTL: ttl, Token: func() string { return sharedToken }})
	}
	a, b := named(10*time.Second), named(10*time.Second)
	first, err := a.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("A TryLock() = %v, want nil", err)
	}
	if _, err := b.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("B TryLock() while A holds the key = %v, want %v", err, strategy.ErrNotAcquired)
	}
	lockCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if lease, err := b.Lock(lockCtx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("B Lock() while A holds the key = %v, want %v (two holders)", describe(lease), strategy.ErrNotAcquired)
	}
	if err := first.Unlock(ctx); err != nil {
		t.Errorf("A Unlock() = %v, want nil", err)
	}

	// A's lock expires and B takes the key: A's late Unlock must leave
	// B's lock alone.
	a, b = named(200*time.Millisecond), named(200*time.Millisecond)
	if p := a.Properties(); !expires(p) || !lateUnlockSafe(p) {
		t.Skip("technique's lock never expires, or its late Unlock deletes the next holder's lock; its own tests show it")
	}
	stale := mustLock(t, a, "expiring")
	waitCtx, cancelWait := context.WithTimeout(ctx, 10*time.Second)
	defer cancelWait()
	holder, err := b.Lock(waitCtx, "expiring")
	if err != nil {
		t.Fatalf("B Lock() after A's lock expired = %v, want nil", err)
	}
	if stale.Token() == holder.Token() {
		t.Errorf("A and B Token() = %q and %q, want different values whatever Config.Token returns", stale.Token(), holder.Token())
	}
	if err := stale.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("A's late Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
	if lease, err := a.TryLock(ctx, "expiring"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() after A's late Unlock = %v, want %v (B still holds the key)", describe(lease), strategy.ErrNotAcquired)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Errorf("B Unlock() = %v, want nil", err)
	}
}

// describe names what a call that should have failed returned.
func describe(lease strategy.Lease) string {
	if lease == nil {
		return "<nil lease>"
	}
	return fmt.Sprintf("a lease with token %q", lease.Token())
}

package locktest

import (
	"context"
	"errors"
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
		name string
		want error // what the failed call must match
		fail func(lease strategy.Lease) error
	}{
		{"Unlock with an ended context", context.Canceled, func(lease strategy.Lease) error {
			return lease.Unlock(dead)
		}},
		{"Unlock with a failing pool", ErrInjected, func(lease strategy.Lease) error {
			pool.FailNext(1)
			return lease.Unlock(context.Background())
		}},
		{"Extend with an ended context", context.Canceled, func(lease strategy.Lease) error {
			return lease.Extend(dead, 0)
		}},
		{"Extend with a failing pool", ErrInjected, func(lease strategy.Lease) error {
			pool.FailNext(1)
			return lease.Extend(context.Background(), 0)
		}},
	}
	for _, fl := range failures {
		t.Run(fl.name, func(t *testing.T) {
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

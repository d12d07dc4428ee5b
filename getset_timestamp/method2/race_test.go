package method2_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// tryLock runs l.TryLock(key) under locktest.StopAt at point, and hands
// the lease it got, if any, to *lease.
func tryLock(l strategy.Locker, key string, lease *strategy.Lease) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		got, err := l.TryLock(ctx, key)
		*lease = got
		return err
	}
}

// deadHolder takes key with a clock an hour behind and drops the lease:
// the article's p1, which died holding the lock, its stored time already
// passed for every other client.
func deadHolder(t *testing.T, node *redistest.Node, key string) {
	t.Helper()
	p1 := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second, Clock: skewed(-time.Hour)})
	if _, err := p1.TryLock(context.Background(), key); err != nil {
		t.Fatalf("TryLock() by p1 = %v, want nil", err)
	}
}

// TestP2P3BothHold reproduces the article's story. p1 dies holding the
// lock; p2 and p3 both GET its time and see it passed; p2 DELs the key and
// SETNXes its own time; p3, slower, then DELs p2's lock and SETNXes its own:
// both hold the lock.
func TestP2P3BothHold(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	deadHolder(t, node, "k")
	p2 := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	p3 := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 20 * time.Second})

	var lease2, lease3 strategy.Lease
	s2 := locktest.StopAt(t, fault.GetSetTimestampMethod2AcquireAfterGet, tryLock(p2, "k", &lease2))
	s3 := locktest.StopAt(t, fault.GetSetTimestampMethod2AcquireAfterGet, tryLock(p3, "k", &lease3))
	// Both have seen p1's time passed. p2 goes on first.
	if err := s2.Resume(); err != nil {
		t.Fatalf("TryLock() by p2 = %v, want nil", err)
	}
	if got := locktest.Get(t, node, "lock:k"); got != lease2.Token() {
		t.Fatalf("GET lock:k after p2 = %q, want p2's time %q", got, lease2.Token())
	}
	// p3's DEL deletes p2's live lock; its SETNX then succeeds.
	if err := s3.Resume(); err != nil {
		t.Fatalf("TryLock() by p3 while p2 holds = %v, want nil (its DEL removed p2's lock)", err)
	}
	if got := locktest.Get(t, node, "lock:k"); got != lease3.Token() {
		t.Errorf("GET lock:k after p3 = %q, want p3's time %q", got, lease3.Token())
	}
	var overlap locktest.Overlap
	for _, lease := range []strategy.Lease{lease2, lease3} {
		if now := time.Now(); !now.Before(lease.Deadline()) {
			t.Errorf("lease %s Deadline() = %v, want after now %v", lease.Token(), lease.Deadline(), now)
		}
		overlap.Enter() // both holders go into the critical section
	}
	if got := overlap.Violations(); got != 1 {
		t.Errorf("overlapping holders = %d, want 1 (p2 and p3)", got)
	}
	// p2 cannot tell: its Unlock, a plain DEL, deletes p3's lock and
	// reports success.
	if err := lease2.Unlock(context.Background()); err != nil {
		t.Errorf("p2's Unlock() = %v, want nil (it deletes p3's lock)", err)
	}
	if err := lease3.Unlock(context.Background()); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("p3's Unlock() = %v, want %v (p2's DEL removed the key)", err, strategy.ErrNotHeld)
	}
}

// TestChangedDuringAttempt changes the key from outside while a waiter is
// stopped inside its attempt.
func TestChangedDuringAttempt(t *testing.T) {
	tests := []struct {
		name    string
		point   string
		write   []any
		wantErr error  // nil: the waiter wins
		want    string // the key afterwards, when the waiter loses
	}{
		{
			// Another waiter takes the key between our DEL and SETNX: the
			// second SETNX fails and the attempt is refused.
			name: "taken between DEL and SETNX", point: fault.GetSetTimestampMethod2AcquireAfterDel,
			write: []any{"SET", "lock:k", "99999999999999"}, wantErr: strategy.ErrNotAcquired, want: "99999999999999",
		},
		{
			// Released by p1 between GET and DEL: DEL finds nothing and
			// SETNX wins.
			name: "released before DEL", point: fault.GetSetTimestampMethod2AcquireAfterGet,
			write: []any{"DEL", "lock:k"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			deadHolder(t, node, "k")
			waiter := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second})
			var lease strategy.Lease
			s := locktest.StopAt(t, tt.point, tryLock(waiter, "k", &lease))
			locktest.MustDo(t, node, tt.write[0].(string), tt.write[1:]...)
			err := s.Resume()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("TryLock() = %v, want nil", err)
				}
				if got := locktest.Get(t, node, "lock:k"); got != lease.Token() {
					t.Errorf("GET lock:k = %q, want the waiter's time %q", got, lease.Token())
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("TryLock() = %v, want %v", err, tt.wantErr)
			}
			if got := locktest.Get(t, node, "lock:k"); got != tt.want {
				t.Errorf("GET lock:k = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReleasedBeforeGet: the key vanishes between the failed SETNX and the
// GET (the article's int(None)). The lock is free, so the attempt SETNXes
// without a DEL: if another client takes the key between the GET and that
// SETNX, its lock stays, and the attempt is refused; with no one in
// between, the attempt takes the key.
func TestReleasedBeforeGet(t *testing.T) {
	tests := []struct {
		name     string
		takenBy  string // what another client SETs between GET and SETNX; "" for nobody
		wantTake bool
	}{
		{name: "free", wantTake: true},
		{name: "taken after GET", takenBy: "99999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			locktest.MustDo(t, node, "SET", "lock:k", "99999999999998") // a live lock
			waiter := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: time.Minute})
			// The holder releases right after the waiter's SETNX failed;
			// the waiter then stops after its GET.
			var lease strategy.Lease
			s := locktest.StopAt(t, fault.GetSetTimestampMethod2AcquireAfterGet, func(stop context.Context) error {
				release := func(_ context.Context, p string) error {
					if p == fault.GetSetTimestampMethod2AcquireBeforeGet {
						if _, err := node.Do("DEL", "lock:k"); err != nil {
							return err
						}
					}
					return fault.At(stop, p) // StopAt's own hook
				}
				return tryLock(waiter, "k", &lease)(fault.With(stop, release))
			})
			if tt.takenBy != "" {
				locktest.MustDo(t, node, "SET", "lock:k", tt.takenBy)
			}
			err := s.Resume()
			if !tt.wantTake {
				if !errors.Is(err, strategy.ErrNotAcquired) {
					t.Fatalf("TryLock() = %v, want %v", err, strategy.ErrNotAcquired)
				}
				if got := locktest.Get(t, node, "lock:k"); got != tt.takenBy {
					t.Errorf("GET lock:k = %q, want the other client's %q left alone", got, tt.takenBy)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryLock() whose GET found no key = %v, want nil", err)
			}
			if got := locktest.Get(t, node, "lock:k"); got != lease.Token() {
				t.Errorf("GET lock:k = %q, want the waiter's time %q", got, lease.Token())
			}
		})
	}
}

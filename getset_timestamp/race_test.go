package getsettimestamp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// result is what a TryLock run in a goroutine returns.
type result struct {
	lease strategy.Lease
	err   error
}

// tryLockAt starts TryLock(key) in a goroutine, stopped by a Gate at point,
// and waits until it reaches the gate. The goroutine ends when TryLock
// returns: after gate.Open, or when ctx ends.
func tryLockAt(t *testing.T, ctx context.Context, l strategy.Locker, key, point string) (*fault.Gate, <-chan result) {
	t.Helper()
	gate := fault.NewGate(point)
	done := make(chan result, 1)
	go func() {
		lease, err := l.TryLock(fault.With(ctx, gate.Hook), key)
		done <- result{lease, err}
	}()
	select {
	case <-gate.Reached():
	case r := <-done:
		t.Fatalf("TryLock() = %v, %v before reaching %s, want it stopped there", r.lease, r.err, point)
	case <-ctx.Done():
		t.Fatalf("TryLock() never reached %s: %v", point, ctx.Err())
	}
	return gate, done
}

// expiredHolder takes key with a clock an hour behind, so its stored time
// has already passed for every other client, and returns its lease.
func expiredHolder(t *testing.T, node *redistest.Node, key string) strategy.Lease {
	t.Helper()
	l := newLocker(t, node, strategy.Config{TTL: 10 * time.Second, Clock: skewed(-time.Hour)})
	lease, err := l.TryLock(context.Background(), key)
	if err != nil {
		t.Fatalf("TryLock() by the holder = %v, want nil", err)
	}
	return lease
}

// TestGetSetRace reproduces the article's p2/p3 race: two waiters both see
// the holder's time passed and both send GETSET. Redis runs them one after
// the other, so exactly one wins; but the loser's GETSET has already
// replaced the winner's time with its own.
func TestGetSetRace(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	holder := expiredHolder(t, node, "k")
	// Different TTLs, so the two waiters write different times even within
	// the same millisecond.
	p2 := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
	p3 := newLocker(t, node, strategy.Config{TTL: 20 * time.Second})

	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	ctx3, cancel3 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel3()
	gate2, done2 := tryLockAt(t, ctx2, p2, "k", fault.GetSetTimestampAcquireBeforeGetSet)
	gate3, done3 := tryLockAt(t, ctx3, p3, "k", fault.GetSetTimestampAcquireBeforeGetSet)
	gate2.Open()
	gate3.Open()
	r2, r3 := <-done2, <-done3

	winner, loser := r2, r3
	if r2.err != nil {
		winner, loser = r3, r2
	}
	if winner.err != nil {
		t.Fatalf("TryLock() results = %v and %v, want exactly one nil", r2.err, r3.err)
	}
	if !errors.Is(loser.err, strategy.ErrNotAcquired) {
		t.Fatalf("losing TryLock() = %v, want %v (exactly one winner)", loser.err, strategy.ErrNotAcquired)
	}
	stored := locktest.Get(t, node, "lock:k")
	if stored == winner.lease.Token() {
		t.Fatalf("GET lock:k = winner's time %q, want the loser's GETSET to have overwritten it", stored)
	}
	// The loser's time is the other waiter's: 10 s apart from the winner's.
	if d := stampOf(t, stored) - stampOf(t, winner.lease.Token()); d < 5000 && d > -5000 {
		t.Errorf("stored time - winner's time = %d ms, want about ±10000 (the loser's time)", d)
	}
	if stored == holder.Token() {
		t.Errorf("GET lock:k = the expired holder's time %q, want it replaced", stored)
	}
}

// TestChangedDuringAttempt changes the key from outside while a waiter is
// stopped inside its attempt: the article's int(None) windows, and a
// foreign value slipping in between GET and GETSET.
func TestChangedDuringAttempt(t *testing.T) {
	tests := []struct {
		name    string
		expired bool   // the holder's time has passed (else the lock is live)
		point   string // where the waiter stops
		write   []any  // the outside write at that point
		// wantErr nil means the waiter wins and the key holds its time.
		wantErr   error
		wantValue string
	}{
		{
			// The lock is released between the failed SETNX and GET: GET
			// finds nothing, and the attempt starts over at SETNX and wins.
			name: "deleted before GET", point: fault.GetSetTimestampAcquireBeforeGet,
			write: []any{"DEL", "lock:k"},
		},
		{
			// Deleted between GET and GETSET: GETSET writes into an empty
			// key and returns nil, which counts as a win (the article's
			// `or 0`), as SETNX would have.
			name: "deleted before GETSET", expired: true, point: fault.GetSetTimestampAcquireBeforeGetSet,
			write: []any{"DEL", "lock:k"},
		},
		{
			// Another application writes its value between GET and GETSET:
			// GETSET overwrites it (the residual window), the attempt puts
			// it back and returns ErrNotTimestamp.
			name: "foreign value before GETSET", expired: true, point: fault.GetSetTimestampAcquireBeforeGetSet,
			write:   []any{"SET", "lock:k", "foreign"},
			wantErr: getsettimestamp.ErrNotTimestamp, wantValue: "foreign",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			if tt.expired {
				expiredHolder(t, node, "k")
			} else {
				live := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
				if _, err := live.TryLock(context.Background(), "k"); err != nil {
					t.Fatalf("holder TryLock() = %v, want nil", err)
				}
			}
			waiter := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			gate, done := tryLockAt(t, ctx, waiter, "k", tt.point)
			if _, err := node.Do(tt.write[0].(string), tt.write[1:]...); err != nil {
				t.Fatalf("%v = %v, want nil", tt.write, err)
			}
			gate.Open()
			r := <-done
			if tt.wantErr == nil {
				if r.err != nil {
					t.Fatalf("TryLock() = %v, want nil", r.err)
				}
				if got := locktest.Get(t, node, "lock:k"); got != r.lease.Token() {
					t.Errorf("GET lock:k = %q, want the waiter's time %q", got, r.lease.Token())
				}
				return
			}
			if !errors.Is(r.err, tt.wantErr) || errors.Is(r.err, strategy.ErrNotAcquired) {
				t.Fatalf("TryLock() = %v, want %v and not %v", r.err, tt.wantErr, strategy.ErrNotAcquired)
			}
			if !strings.Contains(r.err.Error(), "put back") {
				t.Errorf("TryLock() error %q, want it to say the value was put back", r.err)
			}
			if got := locktest.Get(t, node, "lock:k"); got != tt.wantValue {
				t.Errorf("GET lock:k = %q, want %q", got, tt.wantValue)
			}
		})
	}
}

// TestExtendWithoutOwnerCheck shows Extend's GETSET: it reports whether
// the lock was still the lease's, but writes its time in every case except
// over a foreign value, which it puts back.
func TestExtendWithoutOwnerCheck(t *testing.T) {
	tests := []struct {
		name      string
		change    func(t *testing.T, node *redistest.Node) // after the lease is taken
		wantErrs  []error
		wantStamp bool   // the key holds a timestamp that is not the lease's
		wantValue string // else: the key holds this
	}{
		{
			name: "taken over",
			change: func(t *testing.T, node *redistest.Node) {
				next := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
				if _, err := next.TryLock(context.Background(), "k"); err != nil {
					t.Fatalf("TryLock() by the next client = %v, want nil", err)
				}
			},
			wantErrs: []error{strategy.ErrNotHeld}, wantStamp: true,
		},
		{
			name: "deleted",
			change: func(t *testing.T, node *redistest.Node) {
				if _, err := node.Do("DEL", "lock:k"); err != nil {
					t.Fatalf("DEL lock:k = %v, want nil", err)
				}
			},
			wantErrs: []error{strategy.ErrNotHeld}, wantStamp: true,
		},
		{
			name: "foreign value",
			change: func(t *testing.T, node *redistest.Node) {
				if _, err := node.Do("SET", "lock:k", "foreign"); err != nil {
					t.Fatalf("SET lock:k = %v, want nil", err)
				}
			},
			wantErrs: []error{strategy.ErrNotHeld, getsettimestamp.ErrNotTimestamp}, wantValue: "foreign",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			lease := expiredHolder(t, node, "k")
			tt.change(t, node)
			before := locktest.Get(t, node, "lock:k")
			err := lease.Extend(context.Background(), 20*time.Second) // not the holder's 10 s: a different time
			for _, want := range tt.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("Extend() = %v, want %v", err, want)
				}
			}
			got := locktest.Get(t, node, "lock:k")
			if !tt.wantStamp {
				if got != tt.wantValue {
					t.Errorf("GET lock:k after Extend = %q, want %q", got, tt.wantValue)
				}
				return
			}
			if got == before || got == lease.Token() {
				t.Errorf("GET lock:k after Extend = %q, want Extend's new time (before %q, lease %q)", got, before, lease.Token())
			}
			stampOf(t, got)
		})
	}
}

package setnxexpire_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	setnxexpire "github.com/lockzoo/lockzoo/setnx_expire"
	"github.com/lockzoo/lockzoo/strategy"
)

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return setnxexpire.New(pool, cfg)
}

func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	l, err := setnxexpire.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "setnx_expire", MutualExclusion: true, AtomicAcquire: false, OwnerSafeRelease: true, ClockSafe: true,
		AcquireRoundTrips: 2, ReleaseRoundTrips: 3,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// newLocker builds a setnx_expire Locker over node, closed in t.Cleanup,
// or fails the test.
func newLocker(t *testing.T, node *redistest.Node, cfg strategy.Config) *setnxexpire.Locker {
	t.Helper()
	l, err := setnxexpire.New(node.Pool(), cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// pttl returns the key's PTTL in milliseconds or fails the test.
func pttl(t *testing.T, node *redistest.Node, key string) int64 {
	t.Helper()
	ms, err := redis.Int64(node.Do("PTTL", key))
	if err != nil {
		t.Fatalf("PTTL %s = %v, want nil", key, err)
	}
	return ms
}

// TestRedisState checks what setnx_expire writes: the token under the
// prefixed key, an expiry in whole seconds that Extend pushes out, and no
// key after Unlock.
func TestRedisState(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l := newLocker(t, node, strategy.Config{TTL: 2 * time.Second, Prefix: "p:"})
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if got := locktest.Get(t, node, "p:k"); got != lease.Token() {
		t.Errorf("GET p:k = %q, want the lease token %q", got, lease.Token())
	}
	if ms := pttl(t, node, "p:k"); ms <= 1000 || ms > 2000 {
		t.Errorf("PTTL p:k = %d, want in (1000, 2000]", ms)
	}
	deadline := lease.Deadline()
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	if ms := pttl(t, node, "p:k"); ms <= 20000 || ms > 30000 {
		t.Errorf("PTTL p:k after Extend(30s) = %d, want in (20000, 30000]", ms)
	}
	if !lease.Deadline().After(deadline.Add(20 * time.Second)) {
		t.Errorf("Deadline() after Extend = %v, want later than %v", lease.Deadline(), deadline.Add(20*time.Second))
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if n, err := redis.Int(node.Do("EXISTS", "p:k")); err != nil || n != 0 {
		t.Errorf("EXISTS p:k after Unlock = %d, %v; want 0", n, err)
	}
}

// TestSecondGranularity shows the article's int(math.ceil(lock_timeout)):
// every TTL reaches Redis rounded up to whole seconds, on acquire and on
// extend, while the lease's Deadline keeps the TTL asked for.
func TestSecondGranularity(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	tests := []struct {
		name    string
		ttl     time.Duration
		wantSec int64 // the EXPIRE Redis receives
	}{
		{"1ms", time.Millisecond, 1},
		{"300ms", 300 * time.Millisecond, 1},
		{"1s", time.Second, 1},
		{"1.5s", 1500 * time.Millisecond, 2},
		{"2s", 2 * time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "granularity-" + tt.name
			l := newLocker(t, node, strategy.Config{TTL: tt.ttl})
			start := time.Now()
			lease, err := l.TryLock(ctx, key)
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			// Up to 500 ms of slack for a loaded machine; still far above a
			// sub-second TTL sent as is.
			lo, hi := tt.wantSec*1000-500, tt.wantSec*1000
			if ms := pttl(t, node, "lock:"+key); ms <= lo || ms > hi {
				t.Errorf("PTTL after TryLock with TTL %v = %d ms, want in (%d, %d] (EXPIRE %d)", tt.ttl, ms, lo, hi, tt.wantSec)
			}
			end := time.Now()
			// The Deadline counts the TTL asked for, not the rounded one.
			if dl := lease.Deadline(); dl.Before(start.Add(tt.ttl)) || dl.After(end.Add(tt.ttl)) {
				t.Errorf("Deadline() = %v, want within [%v, %v] (the TTL asked for, %v, after the call)", dl, start.Add(tt.ttl), end.Add(tt.ttl), tt.ttl)
			}
			if err := lease.Extend(ctx, tt.ttl); err != nil {
				t.Fatalf("Extend(%v) = %v, want nil", tt.ttl, err)
			}
			if ms := pttl(t, node, "lock:"+key); ms <= lo || ms > hi {
				t.Errorf("PTTL after Extend(%v) = %d ms, want in (%d, %d] (EXPIRE %d)", tt.ttl, ms, lo, hi, tt.wantSec)
			}
			if err := lease.Unlock(ctx); err != nil {
				t.Errorf("Unlock() = %v, want nil", err)
			}
		})
	}
}

// crashAfterSetNX makes a client that dies between SETNX and EXPIRE on key
// and checks the immortal lock it leaves: the key exists with TTL -1. It
// returns the value the client wrote.
func crashAfterSetNX(t *testing.T, node *redistest.Node, key string) string {
	t.Helper()
	crashed := newLocker(t, node, strategy.Config{TTL: 300 * time.Millisecond, Token: func() string { return "crashed" }})
	ctx := fault.With(context.Background(), fault.Crash(fault.SetNXExpireAcquireAfterSetNX))
	if _, err := crashed.TryLock(ctx, key); !errors.Is(err, fault.ErrCrashed) {
		t.Fatalf("TryLock() with a crash after SETNX = %v, want %v", err, fault.ErrCrashed)
	}
	// The value is Config.Token's "crashed" made unique: "crashed.<random>".
	got := locktest.Get(t, node, "lock:"+key)
	if !strings.HasPrefix(got, "crashed.") {
		t.Fatalf("GET lock:%s after the crash = %q, want %q", key, got, "crashed.<random>")
	}
	if ttl, err := redis.Int64(node.Do("TTL", "lock:"+key)); err != nil || ttl != -1 {
		t.Fatalf("TTL lock:%s after the crash = %d, %v; want -1 (no expiry)", key, ttl, err)
	}
	return got
}

// TestCrashBetweenSetNXAndExpire shows the weakness of the two-command
// acquire: a client that dies after SETNX leaves a key with no TTL, which
// stays until a contender repairs it with EXPIRE (the article's TTL == -1
// branch) and that expiry passes.
func TestCrashBetweenSetNXAndExpire(t *testing.T) {
	t.Run("TryLock repairs", func(t *testing.T) {
		locktest.NoLeaks(t)
		node := redistest.Start(t, 1)[0]
		crashed := crashAfterSetNX(t, node, "k")
		l := newLocker(t, node, strategy.Config{TTL: 300 * time.Millisecond})
		if _, err := l.TryLock(context.Background(), "k"); !errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("TryLock() on the immortal lock = %v, want %v", err, strategy.ErrNotAcquired)
		}
		// The failed attempt gave the key a TTL: 300 ms rounded up to 1 s.
		if ms := pttl(t, node, "lock:k"); ms <= 0 || ms > 1000 {
			t.Errorf("PTTL lock:k after the failed TryLock = %d, want in (0, 1000] (repaired)", ms)
		}
		if got := locktest.Get(t, node, "lock:k"); got != crashed {
			t.Errorf("GET lock:k after the repair = %q, want %q (the repair must not take the lock)", got, crashed)
		}
	})
	t.Run("Lock repairs then acquires", func(t *testing.T) {
		locktest.NoLeaks(t)
		node := redistest.Start(t, 1)[0]
		crashed := crashAfterSetNX(t, node, "k")
		l := newLocker(t, node, strategy.Config{TTL: 300 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		type result struct {
			lease strategy.Lease
			err   error
		}
		done := make(chan result, 1)
		go func() { // ends when Lock returns, at the latest when ctx ends
			lease, err := l.Lock(ctx, "k")
			done <- result{lease, err}
		}()
		repaired := false
		for !repaired && ctx.Err() == nil {
			switch ms := pttl(t, node, "lock:k"); {
			case ms > 0:
				repaired = true
			case ms == -1:
				time.Sleep(5 * time.Millisecond)
			default:
				t.Fatalf("PTTL lock:k while the waiter waits = %d, want -1 or > 0", ms)
			}
		}
		if !repaired {
			t.Fatalf("the waiting Lock never gave lock:k a TTL")
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("Lock() on the repaired lock = %v, want nil", r.err)
		}
		if got := locktest.Get(t, node, "lock:k"); got != r.lease.Token() || got == crashed {
			t.Errorf("GET lock:k after Lock = %q, want the waiter's token %q", got, r.lease.Token())
		}
		if err := r.lease.Unlock(context.Background()); err != nil {
			t.Errorf("Unlock() = %v, want nil", err)
		}
	})
}

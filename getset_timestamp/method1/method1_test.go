package method1_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/getset_timestamp/method1"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

func TestMain(m *testing.M) { locktest.VerifyTestMain(m) }

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return method1.New(pool, cfg)
}

// TestConformance runs the kit; the checks that need an expiry, an Extend,
// a take-back or an owner-checked release skip or check ErrUnsupported,
// and this package's tests below show what happens instead.
func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	l, err := method1.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "getset_timestamp/method1", MutualExclusion: true, AtomicAcquire: false, OwnerSafeRelease: false, ClockSafe: true,
		AcquireRoundTrips: 1, ReleaseRoundTrips: 1,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// TestRedisState checks what method 1 writes: the article's 1, with no
// Redis expiry whatever the TTL, under <prefix><key>; Extend is
// unsupported and leaves it; Unlock deletes it.
func TestRedisState(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 50 * time.Millisecond, Prefix: "p:"})
	start := time.Now()
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if got := lease.Token(); got != method1.Value {
		t.Errorf("Token() = %q, want %q", got, method1.Value)
	}
	if got := locktest.Get(t, node, "p:k"); got != "1" {
		t.Errorf("GET p:k = %q, want %q", got, "1")
	}
	if ttl, err := redis.Int64(node.Do("PTTL", "p:k")); err != nil || ttl != -1 {
		t.Errorf("PTTL p:k = %d, %v; want -1 (no expiry, as in the article)", ttl, err)
	}
	if dl := lease.Deadline(); dl.Before(start.Add(50 * time.Millisecond)) {
		t.Errorf("Deadline() = %v, want the TTL after the call began, %v", dl, start.Add(50*time.Millisecond))
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrUnsupported) {
		t.Errorf("Extend() = %v, want %v", err, strategy.ErrUnsupported)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if got := locktest.Get(t, node, "p:k"); got != "" {
		t.Errorf("GET p:k after Unlock = %q, want no key", got)
	}
}

// TestDefaultRetry: with no Config.Retry, Lock waits the article's 0.5 s
// between attempts when no release notice comes (the key is deleted from
// outside, which publishes none).
func TestDefaultRetry(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{})
	locktest.MustDo(t, node, "SET", "lock:k", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	calls := locktest.CommandCalls(t, node, "setnx")
	if _, err := l.Lock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("Lock(200ms) of a held key = %v, want %v", err, strategy.ErrNotAcquired)
	}
	// One attempt, then a 0.5 s wait that ctx cut short.
	if got := locktest.CommandCalls(t, node, "setnx") - calls; got < 1 || got > 2 {
		t.Errorf("SETNX calls by Lock(200ms) = %d, want 1 (the next comes 0.5 s later; the engine's default retry would send dozens)", got)
	}
}

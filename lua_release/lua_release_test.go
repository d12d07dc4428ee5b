package luarelease_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return luarelease.New(pool, cfg)
}

func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	l, err := luarelease.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "lua_release", MutualExclusion: true, AtomicAcquire: true, OwnerSafeRelease: true, ClockSafe: true,
		Fencing: true, AcquireRoundTrips: 1, ReleaseRoundTrips: 1,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// TestRedisState checks what lua_release writes: the token under the
// prefixed key with a millisecond TTL, a PTTL that Extend pushes out, and no
// key after Unlock.
func TestRedisState(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 2 * time.Second, Prefix: "p:"})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if got, err := redis.String(node.Do("GET", protocol.LockKey("p:", "k"))); err != nil || got != lease.Token() {
		t.Errorf("GET p:k = %q, %v; want the lease token %q", got, err, lease.Token())
	}
	before, err := redis.Int64(node.Do("PTTL", protocol.LockKey("p:", "k")))
	if err != nil || before <= 0 || before > 2000 {
		t.Fatalf("PTTL before Extend = %d, %v; want in (0, 2000]", before, err)
	}
	deadline := lease.Deadline()
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	after, err := redis.Int64(node.Do("PTTL", protocol.LockKey("p:", "k")))
	if err != nil || after <= 20000 {
		t.Errorf("PTTL after Extend(30s) = %d, %v; want > 20000", after, err)
	}
	if !lease.Deadline().After(deadline.Add(20 * time.Second)) {
		t.Errorf("Deadline() after Extend = %v, want later than %v", lease.Deadline(), deadline.Add(20*time.Second))
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if n, err := redis.Int(node.Do("EXISTS", protocol.LockKey("p:", "k"))); err != nil || n != 0 {
		t.Errorf("EXISTS p:k after Unlock = %d, %v; want 0", n, err)
	}
}

// TestNoScriptFallback flushes the script cache under a held lock: the
// release must still work by falling back from EVALSHA to EVAL.
func TestNoScriptFallback(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l, err := luarelease.New(node.Pool(), strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	first, err := l.TryLock(ctx, "a")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if err := first.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	second, err := l.TryLock(ctx, "a")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if _, err := node.Do("SCRIPT", "FLUSH"); err != nil {
		t.Fatalf("SCRIPT FLUSH = %v, want nil", err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Errorf("Unlock() after SCRIPT FLUSH = %v, want nil", err)
	}
	if n, err := redis.Int(node.Do("EXISTS", protocol.LockKey("lock:", "a"))); err != nil || n != 0 {
		t.Errorf("EXISTS lock:a = %d, %v; want 0", n, err)
	}
}

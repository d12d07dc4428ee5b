package setnxexpire_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestRepairExpiresForeignKey shows that the TTL repair is blind to whose
// key it repairs: another application's hash that happens to live under the
// lock's name, and has no TTL, gets one from a waiting TryLock, and then
// vanishes with its data. This is the article's algorithm (TTL == -1, then
// EXPIRE), kept as it is.
func TestRepairExpiresForeignKey(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	locktest.MustDo(t, node, "HSET", "lock:profile", "name", "ada")
	if ttl, err := redis.Int64(node.Do("TTL", "lock:profile")); err != nil || ttl != -1 {
		t.Fatalf("TTL of the other application's hash = %d, %v; want -1 (no expiry)", ttl, err)
	}

	l := newLocker(t, node, strategy.Config{TTL: 300 * time.Millisecond})
	if _, err := l.TryLock(context.Background(), "profile"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock() over the hash = %v, want %v", err, strategy.ErrNotAcquired)
	}
	if typ, err := redis.String(node.Do("TYPE", "lock:profile")); err != nil || typ != "hash" {
		t.Fatalf("TYPE lock:profile after TryLock = %q, %v; want hash (untouched but for its TTL)", typ, err)
	}
	// 300 ms rounded up to 1 s: the hash now expires like a lock.
	if ms := pttl(t, node, "lock:profile"); ms <= 0 || ms > 1000 {
		t.Fatalf("PTTL of the other application's hash after TryLock = %d, want in (0, 1000]: the repair gave it an expiry", ms)
	}
	locktest.WaitGone(t, node, "lock:profile", 5*time.Second) // and the other application's data with it
}

// TestUnlockOutOfMemory: under maxmemory with noeviction, Unlock and
// Extend fail with OOM (the command queued in MULTI is refused) and the
// lock stays until its TTL (locktest.OutOfMemoryKeepsLock).
func TestUnlockOutOfMemory(t *testing.T) {
	locktest.OutOfMemoryKeepsLock(t, factory)
}

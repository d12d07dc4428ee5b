package setnxexpire_test

import (
	"context"
	"errors"
	"strings"
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
	waitGone(t, node, "lock:profile", 5*time.Second) // and the other application's data with it
}

// waitGone polls EXISTS key on node until the key is gone, and fails the
// test when it still exists after within.
func waitGone(t *testing.T, node *redistest.Node, key string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := redis.Int(node.Do("EXISTS", key))
		if err != nil {
			t.Fatalf("EXISTS %s = %v, want nil", key, err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists %v later, want it expired", key, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUnlockOutOfMemory shows that under maxmemory with noeviction Unlock
// cannot release, nor Extend extend: Redis refuses the command queued in
// MULTI with OOM, so the transaction fails and the lock stays, with the
// holder's token, until its TTL runs out; only then is it gone.
func TestUnlockOutOfMemory(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const ttl = time.Second
	l := newLocker(t, node, strategy.Config{TTL: ttl})
	ctx := context.Background()
	ops := []struct {
		name string
		call func(strategy.Lease) error
	}{
		{"Unlock", func(lease strategy.Lease) error { return lease.Unlock(ctx) }},
		{"Extend", func(lease strategy.Lease) error { return lease.Extend(ctx, 30*time.Second) }},
	}
	leases := make([]strategy.Lease, len(ops))
	for i, op := range ops {
		lease, err := l.TryLock(ctx, op.name)
		if err != nil {
			t.Fatalf("TryLock(%q) = %v, want nil", op.name, err)
		}
		leases[i] = lease
	}
	node.ExhaustMemory()
	for i, op := range ops {
		key := "lock:" + op.name
		err := op.call(leases[i])
		t.Logf("%s() on a node out of memory: %v", op.name, err)
		if err == nil || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("%s() on a node out of memory = %v, want Redis's OOM error", op.name, err)
		}
		if errors.Is(err, strategy.ErrNotHeld) {
			t.Errorf("%s() = %v, want an error that does not match %v: the lock is still ours", op.name, err, strategy.ErrNotHeld)
		}
		if got := locktest.Get(t, node, key); got != leases[i].Token() {
			t.Errorf("GET %s after the failed %s = %q, want the holder's token %q", key, op.name, got, leases[i].Token())
		}
		if ms := pttl(t, node, key); ms <= 0 || ms > ttl.Milliseconds() {
			t.Errorf("PTTL %s after the failed %s = %d, want in (0, %d]: the lock stays until its TTL", key, op.name, ms, ttl.Milliseconds())
		}
	}
	for _, op := range ops {
		waitGone(t, node, "lock:"+op.name, 5*time.Second)
	}
}

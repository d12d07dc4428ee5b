package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// OutOfMemoryKeepsLock shows, for a technique whose release and extend run
// as a WATCH/MULTI/EXEC transaction (watch_multi, setnx_expire), that
// under maxmemory with noeviction Unlock cannot release, nor Extend
// extend: Redis refuses the command queued in MULTI with OOM, so the
// transaction fails and the lock stays, with the holder's token, until its
// TTL runs out; only then is it gone. The lock keys are "lock:<name>".
func OutOfMemoryKeepsLock(t *testing.T, f Factory) {
	t.Helper()
	NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const ttl = time.Second
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: ttl})
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
		if got := Get(t, node, key); got != leases[i].Token() {
			t.Errorf("GET %s after the failed %s = %q, want the holder's token %q", key, op.name, got, leases[i].Token())
		}
		if pttl := PTTL(t, node, key); pttl <= 0 || pttl > ttl {
			t.Errorf("PTTL %s after the failed %s = %v, want in (0, %v]: the lock stays until its TTL", key, op.name, pttl, ttl)
		}
	}
	for _, op := range ops {
		WaitGone(t, node, "lock:"+op.name, 5*time.Second)
	}
}

// WaitGone polls EXISTS key on node until the key is gone, and fails the
// test when it still exists after within.
func WaitGone(t testing.TB, node *redistest.Node, key string, within time.Duration) {
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

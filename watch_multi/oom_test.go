package watchmulti_test

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

// TestUnlockOutOfMemory shows that under maxmemory with noeviction Unlock
// cannot release, nor Extend extend: Redis refuses the command queued in
// MULTI with OOM, so the transaction fails and the lock stays, with the
// holder's token, until its TTL runs out; only then is it gone.
func TestUnlockOutOfMemory(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const ttl = time.Second
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: ttl})
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
	var last time.Duration // the longest PTTL left
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
		pttl := locktest.PTTL(t, node, key)
		if pttl <= 0 || pttl > ttl {
			t.Errorf("PTTL %s after the failed %s = %v, want in (0, %v]: the lock stays until its TTL", key, op.name, pttl, ttl)
		}
		last = max(last, pttl)
	}
	// Once the TTL has run out on Redis's clock, the locks are gone.
	time.Sleep(last + 50*time.Millisecond)
	for _, op := range ops {
		if n, err := redis.Int(node.Do("EXISTS", "lock:"+op.name)); err != nil || n != 0 {
			t.Errorf("EXISTS lock:%s after its TTL = %d, %v; want 0", op.name, n, err)
		}
	}
}

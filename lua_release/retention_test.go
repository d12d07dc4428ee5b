package luarelease_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// newRetentionLocker is newLocker with fencing counters kept for
// retention after their lock's TTL.
func newRetentionLocker(t *testing.T, pool strategy.Pool, cfg strategy.Config, retention time.Duration) strategy.Locker {
	t.Helper()
	l, err := luarelease.NewWithRetention(pool, cfg, retention)
	if err != nil {
		t.Fatalf("NewWithRetention() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// dbSize is the number of keys on node.
func dbSize(t *testing.T, node *redistest.Node) int {
	t.Helper()
	n, err := redis.Int(node.Do("DBSIZE"))
	if err != nil {
		t.Fatalf("DBSIZE = %v", err)
	}
	return n
}

// TestDistinctKeysLeaveNothing locks and releases 20,000 distinct keys
// once each: what lua_release leaves behind (the fencing counters) expires
// once the retention has passed. The test shortens the retention to 1 s.
func TestDistinctKeysLeaveNothing(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const keys, workers, retention = 20_000, 8, time.Second
	l := newRetentionLocker(t, node.Pool(), strategy.Config{TTL: time.Second}, retention)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < keys; i += workers {
				lease, err := l.TryLock(ctx, fmt.Sprintf("order:%d", i))
				if err == nil {
					err = lease.Unlock(ctx)
					// A lease whose Deadline passed before its Unlock (a
					// machine so loaded that the 1 s TTL ran out between
					// the two calls) may find its lock expired: that is
					// the TTL, not a fault. Before its Deadline, it is one.
					if errors.Is(err, strategy.ErrNotHeld) && time.Now().After(lease.Deadline()) {
						err = nil
					}
				}
				if err != nil {
					errs <- fmt.Errorf("key %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	left := dbSize(t, node)
	t.Logf("keys left after %d distinct locks: %d right after, ", keys, left)
	if left > keys {
		t.Errorf("DBSIZE right after = %d, want at most one fencing counter per key (%d)", left, keys)
	}
	deadline := time.Now().Add(time.Second + retention + 5*time.Second)
	for dbSize(t, node) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	left = dbSize(t, node)
	t.Logf("keys left once TTL + retention (%v) passed: %d", time.Second+retention, left)
	if left != 0 {
		t.Errorf("DBSIZE after TTL + retention = %d, want 0 (everything lockzoo wrote expires)", left)
	}
}

// TestFencesIncreaseAcrossCounterLoss: the next holder's fence is above
// the last one's although the counter is gone, because its retention
// passed, FLUSHALL dropped it (with the lock: the old holder still
// believes it holds it), or the node restarted empty.
func TestFencesIncreaseAcrossCounterLoss(t *testing.T) {
	tests := []struct {
		name string
		lose func(t *testing.T, node *redistest.Node)
		held bool // the first holder keeps its lease while the counter goes
	}{
		{name: "retention passed", lose: func(t *testing.T, node *redistest.Node) {
			rkey := protocol.LockKey("lock:", "k")
			for deadline := time.Now().Add(5 * time.Second); ; {
				if n, _ := redis.Int(node.Do("EXISTS", luarelease.FenceKey(rkey))); n == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still exists 5 s after its TTL + retention", luarelease.FenceKey(rkey))
				}
				time.Sleep(10 * time.Millisecond)
			}
		}},
		{name: "FLUSHALL under a holder", held: true, lose: func(t *testing.T, node *redistest.Node) {
			locktest.MustDo(t, node, "FLUSHALL")
		}},
		{name: "restart without persistence", lose: func(t *testing.T, node *redistest.Node) {
			node.Kill()
			node.Restart()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := redistest.Start(t, 1)[0]
			ctx := context.Background()
			cfg := strategy.Config{TTL: 100 * time.Millisecond}
			a := newRetentionLocker(t, node.Pool(), cfg, 100*time.Millisecond)
			var last uint64
			var lease strategy.Lease
			for range 3 { // a few holders first: the counter counts up
				var err error
				if lease, err = a.Lock(ctx, "k"); err != nil {
					t.Fatalf("Lock() = %v, want nil", err)
				}
				if f := lease.Fence(); f <= last {
					t.Fatalf("Fence() = %d, want > %d", f, last)
				}
				last = lease.Fence()
				if !tt.held {
					if err := lease.Unlock(ctx); err != nil {
						t.Fatalf("Unlock() = %v, want nil", err)
					}
				}
				if tt.held {
					break
				}
			}
			tt.lose(t, node)
			b := newRetentionLocker(t, node.Pool(), strategy.Config{TTL: time.Second}, time.Minute)
			next, err := b.Lock(ctx, "k")
			if err != nil {
				t.Fatalf("Lock() after the counter was lost = %v, want nil", err)
			}
			if f := next.Fence(); f <= last {
				t.Errorf("Fence() after the counter was lost = %d, want > %d (the last holder's)", f, last)
			}
			_ = next.Unlock(ctx)
		})
	}
}

// TestEvictionKeepsFencesIncreasing: 200 held locks under allkeys-lru and
// a maxmemory that other writes exceed. Whatever is evicted (locks,
// counters), a second client that gets a lock gets a fence above its
// holder's.
func TestEvictionKeepsFencesIncreasing(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	a := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	const locks = 200
	fences := make([]uint64, locks)
	for i := range locks {
		lease, err := a.TryLock(ctx, fmt.Sprint("k", i))
		if err != nil {
			t.Fatalf("TryLock(k%d) = %v, want nil", i, err)
		}
		fences[i] = lease.Fence()
	}
	used := infoField(t, node, "memory", "used_memory")
	locktest.MustDo(t, node, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	locktest.MustDo(t, node, "CONFIG", "SET", "maxmemory", used+512*1024)
	filler := strings.Repeat("x", 1024)
	for i := range 4000 {
		if _, err := node.Do("SET", fmt.Sprint("filler:", i), filler); err != nil {
			t.Fatalf("SET filler:%d = %v", i, err)
		}
	}
	locktest.MustDo(t, node, "CONFIG", "SET", "maxmemory", 0)
	t.Logf("evicted_keys = %d", infoField(t, node, "stats", "evicted_keys"))
	b := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	taken, lower := 0, 0
	for i := range locks {
		lease, err := b.TryLock(ctx, fmt.Sprint("k", i))
		if errors.Is(err, strategy.ErrNotAcquired) {
			continue
		}
		if err != nil {
			t.Fatalf("TryLock(k%d) by B = %v", i, err)
		}
		taken++
		if lease.Fence() <= fences[i] {
			lower++
		}
	}
	t.Logf("B took %d of %d evicted locks; %d with a fence not above A's", taken, locks, lower)
	if taken == 0 {
		t.Fatalf("no lock was evicted; the test did not exercise eviction")
	}
	if lower != 0 {
		t.Errorf("%d of %d next holders got a fence not above their predecessor's, want 0", lower, taken)
	}
}

// infoField reads one integer field of INFO section.
func infoField(t *testing.T, node *redistest.Node, section, field string) int64 {
	t.Helper()
	info, err := redis.String(node.Do("INFO", section))
	if err != nil {
		t.Fatalf("INFO %s = %v", section, err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// TestBadCounterWritesNothing: a fencing counter that is no integer, would
// wrap, or is another type fails the acquire with an error naming it, and
// the lock is not taken (the script wrote nothing).
func TestBadCounterWritesNothing(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l := newLocker(t, node.Pool(), strategy.Config{})
	rkey := protocol.LockKey("lock:", "k")
	fence := luarelease.FenceKey(rkey)
	tests := []struct {
		name string
		set  []any
	}{
		{"not a number", []any{"SET", fence, "x"}},
		{"negative", []any{"SET", fence, "-3"}},
		{"2^63 - 1", []any{"SET", fence, "9223372036854775807"}},
		{"a hash", []any{"HSET", fence, "f", "1"}},
		{"a list", []any{"RPUSH", fence, "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.MustDo(t, node, "DEL", fence)
			locktest.MustDo(t, node, tt.set[0].(string), tt.set[1:]...)
			lease, err := l.TryLock(ctx, "k")
			if err == nil {
				_ = lease.Unlock(ctx)
				t.Fatalf("TryLock() with a bad counter = nil, want an error")
			}
			if !strings.Contains(err.Error(), fence) || errors.Is(err, strategy.ErrNotAcquired) {
				t.Errorf("TryLock() = %v; want an error naming %s that is not ErrNotAcquired", err, fence)
			}
			if n, err := redis.Int(node.Do("EXISTS", rkey)); err != nil || n != 0 {
				t.Errorf("EXISTS %s = %d, %v; want 0 (the failed script wrote nothing)", rkey, n, err)
			}
		})
	}
}

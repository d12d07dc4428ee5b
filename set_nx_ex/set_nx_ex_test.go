package setnxex_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
)

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return setnxex.New(pool, cfg)
}

func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	locktest.NoLeaks(t)
	l, err := setnxex.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "set_nx_ex", MutualExclusion: true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  false,
		ClockSafe:         true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 2,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// TestTTLRoundsUpToSeconds checks that acquire and extend send the TTL in
// whole seconds rounded up (article 000's int(math.ceil(lock_timeout))), and
// that the lease's Deadline still counts only the TTL asked for.
func TestTTLRoundsUpToSeconds(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration // the key's expiry right after acquire or extend
	}{
		{"1ms becomes 1s", time.Millisecond, time.Second},
		{"1.5s becomes 2s", 1500 * time.Millisecond, 2 * time.Second},
		{"2s stays 2s", 2 * time.Second, 2 * time.Second},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			key := fmt.Sprintf("ttl-%d", i)
			l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: tt.ttl})
			lease, err := l.TryLock(ctx, key)
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			end := time.Now()
			pttl := locktest.PTTL(t, node, "lock:"+key)
			// Half a second of slack for a loaded machine; still above the
			// unrounded TTL in every case where rounding matters.
			if pttl <= tt.want-500*time.Millisecond || pttl > tt.want {
				t.Errorf("PTTL after TryLock with TTL %v = %v, want in (%v, %v]", tt.ttl, pttl, tt.want-500*time.Millisecond, tt.want)
			}
			if d := lease.Deadline(); d.After(end.Add(tt.ttl)) {
				t.Errorf("Deadline() = %v, want no later than TryLock's return + TTL %v", d, end.Add(tt.ttl))
			}
			locktest.MustDo(t, node, "PEXPIRE", "lock:"+key, 60_000) // so that Extend visibly sets it
			if err := lease.Extend(ctx, tt.ttl); err != nil {
				t.Fatalf("Extend(%v) = %v, want nil", tt.ttl, err)
			}
			end = time.Now()
			pttl = locktest.PTTL(t, node, "lock:"+key)
			if pttl <= tt.want-500*time.Millisecond || pttl > tt.want {
				t.Errorf("PTTL after Extend(%v) = %v, want in (%v, %v]", tt.ttl, pttl, tt.want-500*time.Millisecond, tt.want)
			}
			if d := lease.Deadline(); d.After(end.Add(tt.ttl)) {
				t.Errorf("Deadline() after Extend = %v, want no later than Extend's return + TTL %v", d, end.Add(tt.ttl))
			}
		})
	}
}

func BenchmarkLockUnlock(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := setnxex.New(node.Pool(), strategy.Config{})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	locktest.BenchLockUnlock(b, l)
}

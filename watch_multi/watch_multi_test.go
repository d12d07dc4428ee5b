package watchmulti_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
	watchmulti "github.com/lockzoo/lockzoo/watch_multi"
)

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return watchmulti.New(pool, cfg)
}

func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	locktest.NoLeaks(t)
	l, err := watchmulti.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "watch_multi", MutualExclusion: true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 3,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// TestAcquireRoundsTTLUp checks that acquire sends the TTL in whole seconds
// rounded up (the article's int(math.ceil(lock_timeout))), and that the
// lease's Deadline still counts only the TTL asked for.
func TestAcquireRoundsTTLUp(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration // the key's expiry right after acquire
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
		})
	}
}

func BenchmarkLockUnlock(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	l, err := watchmulti.New(node.Pool(), strategy.Config{})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	locktest.BenchLockUnlock(b, l)
}

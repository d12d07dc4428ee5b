package bench_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
)

// newLua returns a lua_release Locker over pool, closed in t.Cleanup.
func newLua(t *testing.T, pool strategy.Pool) strategy.Locker {
	t.Helper()
	l, err := luarelease.New(pool, strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		t.Fatalf("luarelease.New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

func checkSpeed(t *testing.T, s bench.Speed, workers int, d time.Duration) {
	t.Helper()
	if s.Ops <= 0 || s.OpsPerSec <= 0 {
		t.Errorf("Ops = %d, OpsPerSec = %v, want both > 0", s.Ops, s.OpsPerSec)
	}
	if s.Workers != workers {
		t.Errorf("Workers = %d, want %d", s.Workers, workers)
	}
	if s.Wall < d {
		t.Errorf("Wall = %v, want at least the duration %v", s.Wall, d)
	}
	if s.Pair.P50 <= 0 || s.Pair.P99 < s.Pair.P50 {
		t.Errorf("Pair = %+v, want 0 < P50 <= P99", s.Pair)
	}
}

func TestUncontended(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const workers, d = 4, 300 * time.Millisecond
	s, err := bench.Uncontended(context.Background(), newLua(t, node.Pool()), workers, d)
	if err != nil {
		t.Fatalf("Uncontended() = %v, want nil", err)
	}
	checkSpeed(t, s, workers, d)
	locktest.AssertReleased(t, node, "lock:*", time.Minute)
}

func TestRaw(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const workers, d = 4, 300 * time.Millisecond
	s, err := bench.Raw(context.Background(), node.Pool(), workers, d)
	if err != nil {
		t.Fatalf("Raw() = %v, want nil", err)
	}
	checkSpeed(t, s, workers, d)
	locktest.AssertReleased(t, node, "lockzoo-bench:*", time.Minute)
}

// TestRawFailsOnRedisDown: Raw returns the failure of its commands instead
// of counting them.
func TestRawFailsOnRedisDown(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	node.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err := bench.Raw(ctx, node.Pool(), 2, 100*time.Millisecond); err == nil {
		t.Errorf("Raw() on a killed node = %+v, nil; want an error", s)
	}
}

func TestContended(t *testing.T) {
	w := bench.DefaultWorkload()
	tests := []struct {
		name    string
		lockers int
		run     func(t *testing.T, pool strategy.Pool) (bench.Contention, error)
	}{
		{"one Locker shared", 1, func(t *testing.T, pool strategy.Pool) (bench.Contention, error) {
			return bench.Contended(context.Background(), newLua(t, pool), w)
		}},
		{"one Locker per worker", w.Workers, func(t *testing.T, pool strategy.Pool) (bench.Contention, error) {
			lockers := make([]strategy.Locker, w.Workers)
			for i := range lockers {
				lockers[i] = newLua(t, pool)
			}
			return bench.ContendedApart(context.Background(), lockers, w)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			c, err := tt.run(t, node.Pool())
			if err != nil {
				t.Fatalf("Contended() = %v, want nil", err)
			}
			checkContention(t, c, w, tt.lockers)
			locktest.AssertReleased(t, node, "lock:*", time.Minute)
		})
	}
}

func checkContention(t *testing.T, c bench.Contention, w bench.Workload, lockers int) {
	t.Helper()
	if want := w.Workers * w.Sections; c.Sections != want {
		t.Errorf("Sections = %d, want %d", c.Sections, want)
	}
	if c.Lockers != lockers {
		t.Errorf("Lockers = %d, want %d", c.Lockers, lockers)
	}
	if c.Utilisation <= 0 || c.Utilisation > 1 {
		t.Errorf("Utilisation = %v, want in (0, 1]", c.Utilisation)
	}
	if least := time.Duration(c.Sections) * w.Hold; c.Held < least {
		t.Errorf("Held = %v, want at least %d sections x %v = %v", c.Held, c.Sections, w.Hold, least)
	}
	if c.Wall < c.Held {
		t.Errorf("Wall = %v < Held = %v on a lock that kept mutual exclusion", c.Wall, c.Held)
	}
	if c.Overlaps != 0 {
		t.Errorf("Overlaps = %d, want 0 for lua_release", c.Overlaps)
	}
	if c.Wait.P50 < 0 || c.Wait.P99 < c.Wait.P50 {
		t.Errorf("Wait = %+v, want 0 <= P50 <= P99", c.Wait)
	}
	if c.Handoff.P50 <= 0 || c.Handoff.P99 < c.Handoff.P50 {
		t.Errorf("Handoff = %+v, want 0 < P50 <= P99", c.Handoff)
	}
	// The samples behind Wait and Handoff, sorted, for pooling runs.
	assert.Len(t, c.Waits, c.Sections, "Waits: one per section")
	assert.Len(t, c.Handoffs, c.Sections-1-c.Overlaps, "Handoffs: one per consecutive pair that did not overlap")
	assert.IsNonDecreasing(t, c.Waits, "Waits sorted")
	assert.Equal(t, bench.Percentile(c.Waits, 0.99), c.Wait.P99, "Wait.P99, want the p99 of Waits")
	t.Logf("utilisation %.0f%%, wait p50 %v p99 %v, hand-off p50 %v p99 %v",
		100*c.Utilisation, c.Wait.P50, c.Wait.P99, c.Handoff.P50, c.Handoff.P99)
}

// TestContendedGivesUp: when no worker can get the lock before ctx ends,
// Contended returns the Lock failure instead of hanging or reporting
// made-up numbers.
func TestContendedGivesUp(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := newLua(t, node.Pool())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// Contended picks a fresh key of its own, so rather than hold it, make
	// the node refuse every write: each Lock attempt fails until ctx ends.
	if _, err := node.Do("CONFIG", "SET", "maxmemory", "1"); err != nil {
		t.Fatalf("CONFIG SET maxmemory: %v", err)
	}
	if _, err := node.Do("CONFIG", "SET", "maxmemory-policy", "noeviction"); err != nil {
		t.Fatalf("CONFIG SET maxmemory-policy: %v", err)
	}
	_, err := bench.Contended(ctx, l, bench.Workload{Workers: 2, Sections: 3, Hold: time.Millisecond})
	if !errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Contended() = %v, want an error matching ErrNotAcquired and DeadlineExceeded", err)
	}
}

func TestRoundTrips(t *testing.T) {
	tests := []struct {
		name             string
		build            func(strategy.Pool) (strategy.Locker, error)
		acquire, release float64
	}{
		{"lua_release", func(p strategy.Pool) (strategy.Locker, error) { return luarelease.New(p, strategy.Config{}) }, 1, 1},
		{"set_nx_ex", func(p strategy.Pool) (strategy.Locker, error) { return setnxex.New(p, strategy.Config{}) }, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			pool := bench.Count(node.Pool())
			l, err := tt.build(pool)
			if err != nil {
				t.Fatalf("New() = %v, want nil", err)
			}
			locktest.CloseOnCleanup(t, l)
			trips, err := bench.RoundTrips(context.Background(), l, []*bench.Counting{pool}, 20)
			if err != nil {
				t.Fatalf("RoundTrips() = %v, want nil", err)
			}
			if trips.Acquire != tt.acquire || trips.Release != tt.release {
				t.Errorf("RoundTrips() = %v+%v, want %v+%v", trips.Acquire, trips.Release, tt.acquire, tt.release)
			}
			if trips.Pairs != 20 {
				t.Errorf("Pairs = %d, want 20", trips.Pairs)
			}
		})
	}
}

func TestInvalidInput(t *testing.T) {
	locktest.NoLeaks(t)
	ctx := context.Background()
	node := redistest.Start(t, 1)[0]
	l := newLua(t, node.Pool())
	tests := []struct {
		name string
		run  func() error
	}{
		{"Uncontended workers 0", func() error { _, err := bench.Uncontended(ctx, l, 0, time.Second); return err }},
		{"Uncontended duration 0", func() error { _, err := bench.Uncontended(ctx, l, 1, 0); return err }},
		{"Uncontended nil locker", func() error { _, err := bench.Uncontended(ctx, nil, 1, time.Second); return err }},
		{"Raw nil pool", func() error { _, err := bench.Raw(ctx, nil, 1, time.Second); return err }},
		{"Contended workers 0", func() error {
			_, err := bench.Contended(ctx, l, bench.Workload{Workers: 0, Sections: 1})
			return err
		}},
		{"Contended sections 0", func() error {
			_, err := bench.Contended(ctx, l, bench.Workload{Workers: 1, Sections: 0})
			return err
		}},
		{"Contended negative hold", func() error {
			_, err := bench.Contended(ctx, l, bench.Workload{Workers: 1, Sections: 1, Hold: -1})
			return err
		}},
		{"ContendedApart too few lockers", func() error {
			_, err := bench.ContendedApart(ctx, []strategy.Locker{l}, bench.Workload{Workers: 2, Sections: 1})
			return err
		}},
		{"ContendedApart nil locker", func() error {
			_, err := bench.ContendedApart(ctx, []strategy.Locker{l, nil}, bench.Workload{Workers: 2, Sections: 1})
			return err
		}},
		{"RoundTrips no pools", func() error { _, err := bench.RoundTrips(ctx, l, nil, 1); return err }},
		{"RoundTrips pairs 0", func() error {
			_, err := bench.RoundTrips(ctx, l, []*bench.Counting{bench.Count(node.Pool())}, 0)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, strategy.ErrInvalidConfig) {
				t.Errorf("%s = %v, want an error wrapping ErrInvalidConfig", tt.name, err)
			}
		})
	}
}

// TestCrowdWorkload: the many-contenders workload gives each of n
// contenders at least 4 sections of 1 ms and at least 256 in all.
func TestCrowdWorkload(t *testing.T) {
	tests := []struct{ n, sections int }{{1, 256}, {8, 32}, {32, 8}, {128, 4}, {1000, 4}}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			w := bench.CrowdWorkload(tt.n)
			if w.Workers != tt.n || w.Sections != tt.sections || w.Hold != time.Millisecond {
				t.Errorf("CrowdWorkload(%d) = %+v, want %d workers x %d sections of 1ms", tt.n, w, tt.n, tt.sections)
			}
		})
	}
}

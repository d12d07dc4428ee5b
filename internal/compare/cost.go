package compare

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
)

// Cost is what one uncontended Lock+Unlock pair cost besides time: the
// Redis CPU it took (the sum of usec over INFO commandstats on every node,
// the INFO and CONFIG calls of the measurement left out) and the heap
// allocations of the whole process while it ran (the benchmark loop's own
// included, the same for every row), each divided by the pairs completed.
type Cost struct {
	RedisMicrosPerPair float64 `json:"redis_us_per_pair"`
	AllocsPerPair      float64 `json:"allocs_per_pair"`
}

// withCost runs measure, which returns an uncontended Speed, and what it
// cost on pools. The Redis statistics are reset (CONFIG RESETSTAT) before
// measure on nodes the run started; on servers named by -addrs, whose
// statistics are not the run's to reset, the cost is the difference of two
// readings.
func withCost(ctx context.Context, pools []strategy.Pool, reset bool, measure func() (bench.Speed, error)) (bench.Speed, *Cost, error) {
	if reset {
		for _, p := range pools {
			if _, err := do(ctx, p, "CONFIG", "RESETSTAT"); err != nil {
				return bench.Speed{}, nil, fmt.Errorf("CONFIG RESETSTAT: %w", err)
			}
		}
	}
	before, err := commandMicros(ctx, pools)
	if err != nil {
		return bench.Speed{}, nil, err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s, err := measure()
	runtime.ReadMemStats(&m1)
	if err != nil {
		return s, nil, err
	}
	after, err := commandMicros(ctx, pools)
	if err != nil {
		return s, nil, err
	}
	if s.Ops == 0 {
		return s, nil, nil
	}
	n := float64(s.Ops)
	return s, &Cost{
		RedisMicrosPerPair: float64(after-before) / n,
		AllocsPerPair:      float64(m1.Mallocs-m0.Mallocs) / n,
	}, nil
}

// commandMicros sums usec over INFO commandstats on every pool's server,
// leaving out the measurement's own INFO and CONFIG calls.
func commandMicros(ctx context.Context, pools []strategy.Pool) (int64, error) {
	var usec int64
	for _, p := range pools {
		info, err := redis.String(do(ctx, p, "INFO", "commandstats"))
		if err != nil {
			return 0, fmt.Errorf("INFO commandstats: %w", err)
		}
		usec += sumMicros(info)
	}
	return usec, nil
}

// sumMicros adds the usec fields of an INFO commandstats reply, but for
// cmdstat_info and cmdstat_config.
func sumMicros(info string) int64 {
	var usec int64
	for _, line := range strings.Split(info, "\r\n") {
		name, stats, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" || name == "cmdstat_config" {
			continue
		}
		for _, f := range strings.Split(stats, ",") {
			if v, ok := strings.CutPrefix(f, "usec="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				usec += n
			}
		}
	}
	return usec
}

// do runs one command on a connection from pool, bounded by ctx.
func do(ctx context.Context, pool strategy.Pool, cmd string, args ...any) (any, error) {
	c, err := pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// frozenCallBound bounds each Lock and each Unlock of the frozen-node
// measurement, as a careful caller bounds calls: a Locker that waits for
// the frozen node waits this long and no longer.
const frozenCallBound = time.Second

// bounded is a Locker whose every call, and every call on its leases, is
// bounded by d.
type bounded struct {
	l strategy.Locker
	d time.Duration
}

func (b bounded) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, b.d)
	defer cancel()
	lease, err := b.l.TryLock(ctx, key)
	if err != nil {
		return nil, err
	}
	return boundedLease{lease, b.d}, nil
}

func (b bounded) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, b.d)
	defer cancel()
	lease, err := b.l.Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	return boundedLease{lease, b.d}, nil
}

func (b bounded) Properties() strategy.Properties { return b.l.Properties() }

type boundedLease struct {
	strategy.Lease
	d time.Duration
}

func (b boundedLease) Extend(ctx context.Context, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, b.d)
	defer cancel()
	return b.Lease.Extend(ctx, ttl)
}

func (b boundedLease) Unlock(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.d)
	defer cancel()
	return b.Lease.Unlock(ctx)
}

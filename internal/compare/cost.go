package compare

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/strategy"
)

// Cost is what one uncontended Lock+Unlock pair cost besides time: the
// Redis CPU it took (the CPU time of every node's main thread, INFO cpu's
// used_cpu_user_main_thread + used_cpu_sys_main_thread) and the heap
// allocations of the whole process while it ran (the benchmark loop's own
// included, the same for every row), each divided by the pairs completed.
//
// The CPU time counts what a call costs the server: reading the command,
// running it and writing the reply. INFO commandstats does not serve: it
// leaves out the reading and the writing, most of a small call's cost, and
// times a script's commands twice, inside the script's time and again on
// their own.
type Cost struct {
	RedisMicrosPerPair float64 `json:"redis_us_per_pair"`
	AllocsPerPair      float64 `json:"allocs_per_pair"`
}

// withCost runs measure, which returns an uncontended Speed, and what it
// cost on pools: the difference of two readings of the nodes' CPU time (on
// servers named by -addrs, the other clients' load is counted too).
func withCost(ctx context.Context, pools []strategy.Pool, measure func() (bench.Speed, error)) (bench.Speed, *Cost, error) {
	before, err := cpuMicros(ctx, pools)
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
	after, err := cpuMicros(ctx, pools)
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

// cpuMicros sums, in µs, the CPU time of every pool's server's main thread
// (INFO cpu).
func cpuMicros(ctx context.Context, pools []strategy.Pool) (int64, error) {
	var usec int64
	for _, p := range pools {
		if cp, ok := p.(*cluster.Pool); ok {
			n, err := clusterMicros(ctx, cp)
			if err != nil {
				return 0, err
			}
			usec += n
			continue
		}
		info, err := redis.String(do(ctx, p, "INFO", "cpu"))
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %w", err)
		}
		n, err := mainThreadMicros(info)
		if err != nil {
			return 0, err
		}
		usec += n
	}
	return usec, nil
}

// mainThreadMicros reads the main thread's user and system CPU time, in
// µs, from an INFO cpu reply; Redis before 6.2 reports no main thread, and
// then the process's time counts.
func mainThreadMicros(info string) (int64, error) {
	fields := map[string]float64{}
	for name, v := range redisinfo.Fields(info) {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			fields[name] = f
		}
	}
	user, okU := fields["used_cpu_user_main_thread"]
	sys, okS := fields["used_cpu_sys_main_thread"]
	if !okU || !okS {
		user, okU = fields["used_cpu_user"]
		sys, okS = fields["used_cpu_sys"]
	}
	if !okU || !okS {
		return 0, fmt.Errorf("INFO cpu: no used_cpu_user and used_cpu_sys in %q", info)
	}
	return int64((user + sys) * 1e6), nil
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

package locktest

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchParallelism is the number of goroutines per GOMAXPROCS that the
// lock+unlock benchmarks run, enough to keep a loopback Redis busy.
const BenchParallelism = 8

// BenchLockUnlock measures uncontended Lock+Unlock pairs: parallel
// goroutines, each on its own key. It reports ops/s and allocs/op.
func BenchLockUnlock(b *testing.B, l strategy.Locker) {
	b.Helper()
	BenchParallel(b, func(ctx context.Context, key string) error {
		lease, err := l.Lock(ctx, key)
		if err != nil {
			return err
		}
		return lease.Unlock(ctx)
	})
}

// BenchParallel runs op in parallel goroutines (BenchParallelism per
// GOMAXPROCS), each with its own key "bench:<n>", and reports ops/s and
// allocs/op. The first error fails the benchmark.
func BenchParallel(b *testing.B, op func(ctx context.Context, key string) error) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(BenchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		key := "bench:" + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			if err := op(ctx, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchContended runs the contended workload (bench.DefaultWorkload: one
// key, 8 workers x 25 critical sections of 1 ms) once per iteration, as
// sub-benchmarks "shared" (one Locker for all workers, like goroutines of
// one process) and "apart" (one Locker each, like separate processes). It
// reports utilisation (%), the p50 and p99 wait for the lock and the p50
// hand-off (ms), averaged over the iterations. Lockers with a Close are
// closed when their sub-benchmark ends.
func BenchContended(b *testing.B, newLocker func() strategy.Locker) {
	b.Helper()
	w := bench.DefaultWorkload()
	run := func(b *testing.B, measure func(ctx context.Context) (bench.Contention, error)) {
		var util, p50, p99, handoff float64
		for b.Loop() {
			c, err := measure(context.Background())
			if err != nil {
				b.Fatalf("contended run = %v, want nil", err)
			}
			util += c.Utilisation * 100
			p50 += ms(c.Wait.P50)
			p99 += ms(c.Wait.P99)
			handoff += ms(c.Handoff.P50)
		}
		n := float64(b.N)
		b.ReportMetric(util/n, "util-%")
		b.ReportMetric(p50/n, "wait-p50-ms")
		b.ReportMetric(p99/n, "wait-p99-ms")
		b.ReportMetric(handoff/n, "handoff-p50-ms")
	}
	b.Run("shared", func(b *testing.B) {
		l := newLocker()
		CloseOnCleanup(b, l)
		run(b, func(ctx context.Context) (bench.Contention, error) { return bench.Contended(ctx, l, w) })
	})
	b.Run("apart", func(b *testing.B) {
		lockers := make([]strategy.Locker, w.Workers)
		for i := range lockers {
			lockers[i] = newLocker()
			CloseOnCleanup(b, lockers[i])
		}
		run(b, func(ctx context.Context) (bench.Contention, error) { return bench.ContendedApart(ctx, lockers, w) })
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ReportRedisCPU notes the CPU time the Redis servers behind nodes have
// used so far and returns a function that reports what they used for the
// benchmark's b.N operations, "redis-cpu-µs/op" (used_cpu_user +
// used_cpu_sys of INFO cpu: the server's own CPU, commands, scripts and
// network I/O alike). Call it as defer locktest.ReportRedisCPU(b, nodes...)().
func ReportRedisCPU(b *testing.B, nodes ...*redistest.Node) func() {
	b.Helper()
	before := redisCPU(b, nodes)
	return func() {
		b.Helper()
		used := redisCPU(b, nodes) - before
		b.ReportMetric(used.Seconds()*1e6/float64(b.N), "redis-cpu-µs/op")
	}
}

// redisCPU is the CPU time the servers behind nodes have used.
func redisCPU(b *testing.B, nodes []*redistest.Node) time.Duration {
	b.Helper()
	var total float64
	for _, n := range nodes {
		info, err := redis.String(n.Do("INFO", "cpu"))
		if err != nil {
			b.Fatalf("INFO cpu on %s = %v", n.Addr(), err)
		}
		fields := redisinfo.Fields(info)
		for _, field := range []string{"used_cpu_user", "used_cpu_sys"} {
			s, err := strconv.ParseFloat(fields[field], 64)
			if err != nil {
				b.Fatalf("INFO cpu on %s: %s %q: %v", n.Addr(), field, fields[field], err)
			}
			total += s
		}
	}
	return time.Duration(total * float64(time.Second))
}

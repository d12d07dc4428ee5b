package locktest

import (
	"context"
	"fmt"
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
	benchParallel(b, op, nil)
}

// BenchParallelTimed is BenchParallel that also times each call of op,
// from its start until it returns, each goroutine into a buffer of its own
// (no lock in the timed loop), and reports the p50 and p99 of all of them
// and the most goroutines seen (Latencies.Report) after the run.
func BenchParallelTimed(b *testing.B, op func(ctx context.Context, key string) error) {
	b.Helper()
	rec := &Latencies{}
	benchParallel(b, op, rec)
	rec.Report(b)
}

// benchParallel is BenchParallel, recording each call's duration in rec
// unless rec is nil.
func benchParallel(b *testing.B, op func(ctx context.Context, key string) error, rec *Latencies) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(BenchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		key := "bench:" + strconv.FormatInt(next.Add(1), 10)
		var buf *LatencyBuffer
		if rec != nil {
			buf = rec.Buffer()
		}
		for pb.Next() {
			start := time.Now()
			err := op(ctx, key)
			if buf != nil {
				buf.Add(time.Since(start))
			}
			if err != nil {
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
// fails the benchmark on the first run with overlapping holders, and
// reports the mean utilisation (%), and the p50 and p99 wait for the lock
// and the p50 hand-off (ms) of every run's sections pooled. Lockers with a
// Close are closed when their sub-benchmark ends.
func BenchContended(b *testing.B, newLocker func() strategy.Locker) {
	b.Helper()
	w := bench.DefaultWorkload()
	b.Run("shared", func(b *testing.B) {
		l := newLocker()
		CloseOnCleanup(b, l)
		benchContention(b, func(ctx context.Context) (bench.Contention, error) { return bench.Contended(ctx, l, w) })
	})
	b.Run("apart", func(b *testing.B) {
		lockers := make([]strategy.Locker, w.Workers)
		for i := range lockers {
			lockers[i] = newLocker()
			CloseOnCleanup(b, lockers[i])
		}
		benchContention(b, func(ctx context.Context) (bench.Contention, error) { return bench.ContendedApart(ctx, lockers, w) })
	})
}

// benchContention runs measure once per iteration and reports what
// BenchContended reports. A run with an error or an overlap fails b.
func benchContention(b *testing.B, measure func(ctx context.Context) (bench.Contention, error)) {
	b.Helper()
	var runs contendedRuns
	for b.Loop() {
		c, err := measure(context.Background())
		if err != nil {
			b.Fatalf("contended run = %v, want nil", err)
		}
		if err := runs.add(c); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range runs.metrics() {
		b.ReportMetric(m.value, m.unit)
	}
}

// contendedRuns accumulates the runs of a contended benchmark: the sum of
// their utilisations and every section's wait and hand-off, pooled.
type contendedRuns struct {
	n               int
	util            float64 // %
	waits, handoffs []time.Duration
}

// add takes one run; it refuses (an error, nothing added) a run whose
// holders overlapped, which a utilisation above 100% would otherwise hide
// in a mean.
func (r *contendedRuns) add(c bench.Contention) error {
	if c.Overlaps > 0 {
		return fmt.Errorf("contended run: %d of %d sections began before the one before them ended (utilisation %.0f%%), want 0: two holders at once", c.Overlaps, c.Sections, c.Utilisation*100)
	}
	r.n++
	r.util += c.Utilisation * 100
	r.waits = append(r.waits, c.Waits...)
	r.handoffs = append(r.handoffs, c.Handoffs...)
	return nil
}

// metric is one reported value and its unit.
type metric struct {
	value float64
	unit  string
}

// metrics returns the mean utilisation and the percentiles of the pooled
// waits and hand-offs, in the order BenchContended reports them.
func (r *contendedRuns) metrics() []metric {
	return []metric{
		{r.util / float64(max(r.n, 1)), "util-%"},
		{ms(bench.Percentile(r.waits, 0.50)), "wait-p50-ms"},
		{ms(bench.Percentile(r.waits, 0.99)), "wait-p99-ms"},
		{ms(bench.Percentile(r.handoffs, 0.50)), "handoff-p50-ms"},
	}
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

package locktest

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

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

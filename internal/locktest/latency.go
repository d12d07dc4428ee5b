package locktest

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
)

// Latencies collects the durations of a benchmark's operations and samples
// the goroutine count. The zero value is ready to use; it is safe for
// concurrent use.
type Latencies struct {
	mu   sync.Mutex
	d    []time.Duration
	n    atomic.Int64
	peak atomic.Int64
}

// Add records one operation that took d, and every 64th time the number of
// goroutines.
func (r *Latencies) Add(d time.Duration) {
	if r.n.Add(1)%64 == 0 {
		g := int64(runtime.NumGoroutine())
		for cur := r.peak.Load(); g > cur && !r.peak.CompareAndSwap(cur, g); cur = r.peak.Load() {
		}
	}
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// Report reports the p50 and p99 of the durations recorded ("p50-µs",
// "p99-µs") and the most goroutines seen ("peak-goroutines"); nothing when
// none was recorded.
func (r *Latencies) Report(b *testing.B) {
	b.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.d) == 0 {
		return
	}
	at := func(q float64) float64 { return float64(bench.Percentile(r.d, q).Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(r.peak.Load()), "peak-goroutines")
}

// BenchLockUnlockTimed is BenchLockUnlock that also reports the p50 and p99
// of each pair, from calling Lock until Unlock returns, and the most
// goroutines seen (Latencies.Report).
func BenchLockUnlockTimed(b *testing.B, l strategy.Locker) {
	b.Helper()
	rec := &Latencies{}
	BenchParallel(b, func(ctx context.Context, key string) error {
		start := time.Now()
		lease, err := l.Lock(ctx, key)
		if err != nil {
			return err
		}
		err = lease.Unlock(ctx)
		rec.Add(time.Since(start))
		return err
	})
	rec.Report(b)
}

// BusyCPU starts n goroutines that keep processors busy without blocking,
// as a process's CPU-bound work does (each can be preempted, none ever
// waits), and stops them in tb's cleanup, which returns once they have
// ended. A benchmark run beside them shows what a lock costs when its
// goroutines must wait for a processor: each hand-off between goroutines
// can wait behind the busy ones.
func BusyCPU(tb testing.TB, n int) {
	tb.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { // ends when stop is closed
			var sink int
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 100_000 {
					sink += i
				}
			}
		})
	}
	tb.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
}

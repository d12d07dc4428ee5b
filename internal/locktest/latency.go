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
// the goroutine count. Each goroutine records into a LatencyBuffer of its
// own (Buffer), so that recording takes no lock; Report merges them after
// the run. The zero value is ready to use.
type Latencies struct {
	mu      sync.Mutex // guards buffers
	buffers []*LatencyBuffer
	peak    atomic.Int64
}

// LatencyBuffer is one goroutine's share of a Latencies. It is not safe
// for concurrent use: each goroutine takes its own from Buffer.
type LatencyBuffer struct {
	r *Latencies
	d []time.Duration
}

// Buffer returns a new buffer for one goroutine's durations, merged into
// r's Report. It is safe for concurrent use.
func (r *Latencies) Buffer() *LatencyBuffer {
	buf := &LatencyBuffer{r: r, d: make([]time.Duration, 0, 1024)}
	r.mu.Lock()
	r.buffers = append(r.buffers, buf)
	r.mu.Unlock()
	return buf
}

// Add records one operation that took d, and, the first time and every
// 64th after, the number of goroutines.
func (buf *LatencyBuffer) Add(d time.Duration) {
	buf.d = append(buf.d, d)
	if len(buf.d)%64 == 1 {
		g := int64(runtime.NumGoroutine())
		peak := &buf.r.peak
		for cur := peak.Load(); g > cur && !peak.CompareAndSwap(cur, g); cur = peak.Load() {
		}
	}
}

// all returns every duration recorded, from every buffer. Call it once the
// goroutines that record have ended.
func (r *Latencies) all() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for _, buf := range r.buffers {
		out = append(out, buf.d...)
	}
	return out
}

// Report reports the p50 and p99 of the durations recorded in every
// buffer ("p50-µs", "p99-µs") and the most goroutines seen
// ("peak-goroutines"); nothing when none was recorded. Call it after the
// run, once the goroutines that record have ended.
func (r *Latencies) Report(b *testing.B) {
	b.Helper()
	d := r.all()
	if len(d) == 0 {
		return
	}
	at := func(q float64) float64 { return float64(bench.Percentile(d, q).Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(r.peak.Load()), "peak-goroutines")
}

// BenchLockUnlockTimed is BenchLockUnlock that also reports the p50 and p99
// of each pair, from calling Lock until Unlock returns, and the most
// goroutines seen (BenchParallelTimed).
func BenchLockUnlockTimed(b *testing.B, l strategy.Locker) {
	b.Helper()
	BenchParallelTimed(b, func(ctx context.Context, key string) error {
		lease, err := l.Lock(ctx, key)
		if err != nil {
			return err
		}
		return lease.Unlock(ctx)
	})
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

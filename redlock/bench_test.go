package redlock_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLockUnlock measures uncontended Lock+Unlock on 5 healthy nodes,
// with the p50 and p99 latency of the pair.
func BenchmarkLockUnlock(b *testing.B) {
	nodes := redistest.Start(b, 5)
	benchNodes(b, nodes)
}

// BenchmarkLockUnlockOneFrozen is BenchmarkLockUnlock with node 4 frozen
// (SIGSTOP): every decision is made by the other four, and the calls to
// the frozen node end in the background within NodeTimeout. It also
// reports the most goroutines seen, to show they do not pile up.
func BenchmarkLockUnlockOneFrozen(b *testing.B) {
	nodes := redistest.Start(b, 5)
	nodes[4].Pause()
	b.Cleanup(nodes[4].Resume)
	benchNodes(b, nodes)
}

func benchNodes(b *testing.B, nodes []*redistest.Node) {
	l := benchLocker(b, nodes)
	rec := &latencies{}
	locktest.BenchLockUnlock(b, timedLocker{Locker: l, rec: rec})
	rec.report(b)
}

// latencies collects Lock+Unlock durations and samples the goroutine count.
type latencies struct {
	mu   sync.Mutex
	d    []time.Duration
	n    atomic.Int64
	peak atomic.Int64
}

func (r *latencies) add(d time.Duration) {
	if r.n.Add(1)%64 == 0 {
		g := int64(runtime.NumGoroutine())
		for cur := r.peak.Load(); g > cur && !r.peak.CompareAndSwap(cur, g); cur = r.peak.Load() {
		}
	}
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

func (r *latencies) report(b *testing.B) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.d) == 0 {
		return
	}
	slices.Sort(r.d)
	at := func(q float64) float64 { return float64(r.d[int(q*float64(len(r.d)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(r.peak.Load()), "peak-goroutines")
}

// timedLocker times each Lock until its lease's Unlock returns.
type timedLocker struct {
	strategy.Locker
	rec *latencies
}

func (l timedLocker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	start := time.Now()
	lease, err := l.Locker.Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	return timedLease{Lease: lease, start: start, rec: l.rec}, nil
}

type timedLease struct {
	strategy.Lease
	start time.Time
	rec   *latencies
}

func (l timedLease) Unlock(ctx context.Context) error {
	err := l.Lease.Unlock(ctx)
	l.rec.add(time.Since(l.start))
	return err
}

// BenchmarkContended is the hand-off workload on 5 healthy nodes: one key,
// 8 workers x 25 critical sections of 1 ms, with the workers sharing one
// Locker and with a Locker each.
func BenchmarkContended(b *testing.B) {
	nodes := redistest.Start(b, 5)
	locktest.BenchContended(b, func() strategy.Locker { return benchLocker(b, nodes) })
}

// benchLocker returns a Locker over nodes with a 10 s TTL whose background
// calls are waited for when the benchmark ends.
func benchLocker(b *testing.B, nodes []*redistest.Node) *redlock.Locker {
	b.Helper()
	l, err := redlock.New(poolsOf(nodes), redlock.Config{Config: strategy.Config{TTL: 10 * time.Second}})
	if err != nil {
		b.Fatalf("New() = %v, want nil", err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.Wait(ctx); err != nil {
			b.Errorf("Wait() = %v, want nil", err)
		}
	})
	return l
}

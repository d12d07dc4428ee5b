package redlock_test

import (
	"context"
	"runtime"
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
	locktest.BenchLockUnlockTimed(b, benchLocker(b, nodes))
}

// BenchmarkLockUnlockBusyCPU is BenchmarkLockUnlock beside two goroutines
// per processor that never block (locktest.BusyCPU), as in a process with
// CPU-bound work: each of a round's hand-offs between goroutines (the
// caller, the node Pipelines' readers, the fan-out) can wait behind them
// for a processor, and the Pipelines' writers yield the processor before
// they write (redisconn.NewDeadlinePipeline). Compare its p50 with
// BenchmarkLockUnlock's, and with lua_release's BenchmarkLockUnlockBusyCPU.
func BenchmarkLockUnlockBusyCPU(b *testing.B) {
	nodes := redistest.Start(b, 5)
	locktest.BusyCPU(b, 2*runtime.GOMAXPROCS(0))
	benchNodes(b, nodes)
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

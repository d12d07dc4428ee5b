package luarelease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// replicaRounds and replicaSlice shape BenchmarkReplicas: each round
// measures every setting for replicaSlice, the settings in turn, so that
// a slow patch of a shared machine falls on all of them alike.
const (
	replicaRounds = 3
	replicaSlice  = time.Second
	// replicaWait is the benchmark's ReplicaTimeout: generous, so that a
	// replica slowed by a busy machine shows in the latency rather than
	// ending the measurement with ErrNotReplicated.
	replicaWait = 2 * time.Second
)

// BenchmarkReplicas measures what waiting for replicas costs, on one
// primary with 2 replicas, in interleaved rounds (run it with
// -benchtime 1x: one iteration is every round): the uncontended Lock+Unlock
// of one goroutine with Config.Replicas 0, 1 and 2 (pairs/s and the
// pair's p99, the worst round's), and the contended workload
// (bench.DefaultWorkload, one Locker per worker) with Replicas 1, and 0
// beside it (utilisation and the wait's p99).
func BenchmarkReplicas(b *testing.B) {
	primary := redistest.Start(b, 1)[0]
	primary.StartReplica()
	primary.StartReplica()
	primary.AwaitAcks(2)
	lockers := map[int]strategy.Locker{}
	for _, n := range []int{0, 1, 2} {
		l, err := luarelease.New(primary.Pool(), strategy.Config{TTL: 10 * time.Second, Replicas: n, ReplicaTimeout: replicaWait})
		if err != nil {
			b.Fatalf("New(Replicas %d) = %v, want nil", n, err)
		}
		locktest.CloseOnCleanup(b, l)
		lockers[n] = l
	}
	w := bench.DefaultWorkload()
	apart := map[int][]strategy.Locker{}
	for _, n := range []int{0, 1} {
		for range w.Workers {
			l, err := luarelease.New(primary.Pool(), strategy.Config{TTL: 10 * time.Second, Replicas: n, ReplicaTimeout: replicaWait})
			if err != nil {
				b.Fatalf("New(Replicas %d) = %v, want nil", n, err)
			}
			locktest.CloseOnCleanup(b, l)
			apart[n] = append(apart[n], l)
		}
	}
	ctx := context.Background()
	pairs := map[int][]time.Duration{}
	ops := map[int]int{}
	walls := map[int]time.Duration{}
	waits := map[int][]time.Duration{}
	handoffs := map[int][]time.Duration{}
	util := map[int]float64{}
	var runs int
	for b.Loop() {
		for round := range replicaRounds {
			for _, n := range []int{0, 1, 2} {
				s, err := bench.Uncontended(ctx, lockers[n], 1, replicaSlice)
				if err != nil {
					b.Fatalf("round %d, Replicas %d: %v", round+1, n, err)
				}
				ops[n] += s.Ops
				walls[n] += s.Wall
				pairs[n] = append(pairs[n], s.Pair.P99)
			}
			for _, n := range []int{0, 1} {
				c, err := bench.ContendedApart(ctx, apart[n], w)
				if err != nil {
					b.Fatalf("round %d, contended, Replicas %d: %v", round+1, n, err)
				}
				if c.Overlaps > 0 {
					b.Fatalf("round %d, contended, Replicas %d: %d overlaps, want 0", round+1, n, c.Overlaps)
				}
				util[n] += c.Utilisation * 100
				waits[n] = append(waits[n], c.Waits...)
				handoffs[n] = append(handoffs[n], c.Handoffs...)
			}
			runs++
		}
	}
	for _, n := range []int{0, 1, 2} {
		b.ReportMetric(float64(ops[n])/walls[n].Seconds(), fmt.Sprintf("pairs/s-r%d", n))
		b.ReportMetric(float64(slowest(pairs[n]))/float64(time.Microsecond), fmt.Sprintf("p99-µs-r%d", n))
	}
	for _, n := range []int{0, 1} {
		b.ReportMetric(util[n]/float64(max(runs, 1)), fmt.Sprintf("contended-util-%%-r%d", n))
		b.ReportMetric(float64(bench.Percentile(waits[n], 0.99))/float64(time.Millisecond), fmt.Sprintf("contended-wait-p99-ms-r%d", n))
		b.ReportMetric(float64(bench.Percentile(handoffs[n], 0.50))/float64(time.Millisecond), fmt.Sprintf("contended-handoff-p50-ms-r%d", n))
	}
}

// slowest is the highest of the rounds' p99s: a round's p99 is the
// figure, and the worst round is the one to report.
func slowest(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

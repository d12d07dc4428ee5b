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
)

// BenchmarkReplicas measures what waiting for replicas costs, on one
// primary with 2 replicas, in interleaved rounds (run it with
// -benchtime 1x: one iteration is every round): the uncontended Lock+Unlock
// of one goroutine with Config.Replicas 0, 1 and 2 (pairs/s and the
// pair's p99), and the contended workload (bench.DefaultWorkload, one
// Locker per worker) with Replicas 1 (utilisation and the wait's p99).
func BenchmarkReplicas(b *testing.B) {
	primary := redistest.Start(b, 1)[0]
	primary.StartReplica()
	primary.StartReplica()
	primary.AwaitAcks(2)
	lockers := map[int]strategy.Locker{}
	for _, n := range []int{0, 1, 2} {
		l, err := luarelease.New(primary.Pool(), strategy.Config{TTL: 10 * time.Second, Replicas: n})
		if err != nil {
			b.Fatalf("New(Replicas %d) = %v, want nil", n, err)
		}
		locktest.CloseOnCleanup(b, l)
		lockers[n] = l
	}
	w := bench.DefaultWorkload()
	apart := make([]strategy.Locker, w.Workers)
	for i := range apart {
		l, err := luarelease.New(primary.Pool(), strategy.Config{TTL: 10 * time.Second, Replicas: 1})
		if err != nil {
			b.Fatalf("New(Replicas 1) = %v, want nil", err)
		}
		locktest.CloseOnCleanup(b, l)
		apart[i] = l
	}
	ctx := context.Background()
	pairs := map[int][]time.Duration{}
	ops := map[int]int{}
	walls := map[int]time.Duration{}
	var waits []time.Duration
	var util float64
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
			c, err := bench.ContendedApart(ctx, apart, w)
			if err != nil {
				b.Fatalf("round %d, contended: %v", round+1, err)
			}
			if c.Overlaps > 0 {
				b.Fatalf("round %d, contended: %d overlaps, want 0", round+1, c.Overlaps)
			}
			util += c.Utilisation * 100
			waits = append(waits, c.Waits...)
			runs++
		}
	}
	for _, n := range []int{0, 1, 2} {
		b.ReportMetric(float64(ops[n])/walls[n].Seconds(), fmt.Sprintf("pairs/s-r%d", n))
		b.ReportMetric(float64(slowest(pairs[n]))/float64(time.Microsecond), fmt.Sprintf("p99-µs-r%d", n))
	}
	b.ReportMetric(util/float64(max(runs, 1)), "contended-util-%-r1")
	b.ReportMetric(float64(bench.Percentile(waits, 0.99))/float64(time.Millisecond), "contended-wait-p99-ms-r1")
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

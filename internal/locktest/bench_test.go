package locktest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/bench"
)

// repeat returns n copies of d.
func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestContendedRunsPoolWaits: the p99 wait is taken over every run's
// waits pooled, not the mean of each run's p99. Run 1's 100 waits are all
// 1 ms; run 2's are 98 of 1 ms and 2 of 100 ms, its p99 100 ms. Pooled,
// 2 of 200 waits are slow: the p99 is 1 ms (a mean of p99s says 50.5 ms).
func TestContendedRunsPoolWaits(t *testing.T) {
	var runs contendedRuns
	require.NoError(t, runs.add(bench.Contention{Sections: 100, Utilisation: 0.5, Waits: repeat(time.Millisecond, 100), Handoffs: repeat(time.Millisecond, 99)}))
	slow := append(repeat(time.Millisecond, 98), 100*time.Millisecond, 100*time.Millisecond)
	require.NoError(t, runs.add(bench.Contention{Sections: 100, Utilisation: 0.7, Waits: slow, Handoffs: repeat(3*time.Millisecond, 99)}))
	got := map[string]float64{}
	for _, m := range runs.metrics() {
		got[m.unit] = m.value
	}
	assert.InDelta(t, 60.0, got["util-%"], 1e-9, "util-%%: the mean of 50%% and 70%%")
	assert.Equal(t, 1.0, got["wait-p50-ms"], "wait-p50-ms")
	assert.Equal(t, 1.0, got["wait-p99-ms"], "wait-p99-ms of the pooled waits (2 slow of 200)")
	assert.Equal(t, 1.0, got["handoff-p50-ms"], "handoff-p50-ms of the pooled hand-offs (99 of 1 ms, 99 of 3 ms)")
}

// TestContendedRunsRefuseOverlap: a run whose holders overlapped is an
// error, whatever its utilisation.
func TestContendedRunsRefuseOverlap(t *testing.T) {
	var runs contendedRuns
	err := runs.add(bench.Contention{Sections: 200, Utilisation: 1.4, Overlaps: 3})
	require.Error(t, err, "add of a run with 3 overlaps")
	assert.Contains(t, err.Error(), "3 of 200 sections")
	assert.Zero(t, runs.n, "runs counted after the refused run")
}

// TestBenchContentionFailsOnOverlap: a benchmark whose run shows an overlap
// fails (testing.Benchmark returns a zero result for a failed benchmark),
// and one without overlap runs.
func TestBenchContentionFailsOnOverlap(t *testing.T) {
	tests := []struct {
		name     string
		overlaps int
		wantRan  bool
	}{
		{"overlap", 1, false},
		{"no overlap", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testing.Benchmark(func(b *testing.B) {
				benchContention(b, func(context.Context) (bench.Contention, error) {
					time.Sleep(10 * time.Millisecond) // a few dozen runs in the benchmark's second
					return bench.Contention{Sections: 2, Utilisation: 0.5, Overlaps: tt.overlaps,
						Waits: repeat(time.Millisecond, 2), Handoffs: repeat(time.Millisecond, 1)}, nil
				})
			})
			assert.Equal(t, tt.wantRan, r.N > 0, "benchmark ran (N = %d)", r.N)
		})
	}
}

// TestLatenciesMergeBuffers: durations recorded by several goroutines,
// each in a buffer of its own, all reach the merged set.
func TestLatenciesMergeBuffers(t *testing.T) {
	var rec Latencies
	const goroutines, each = 4, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			buf := rec.Buffer()
			for i := range each {
				buf.Add(time.Duration(g*each + i))
			}
		})
	}
	wg.Wait()
	got := rec.all()
	slices.Sort(got)
	require.Len(t, got, goroutines*each, "durations merged")
	for i, d := range got {
		require.Equal(t, time.Duration(i), d, "merged duration %d", i)
	}
	assert.Positive(t, rec.peak.Load(), "peak goroutines sampled")
}

package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the q-quantile (q in [0, 1]) of ds by the nearest-rank
// method: the smallest value that at least q of the values do not exceed.
// q below 0 is taken as 0 and above 1 as 1; an empty ds gives 0. ds is not
// modified.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return rank(sorted, q)
}

// rank is Percentile on values already sorted.
func rank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Quantiles are the median and the 99th percentile of a set of durations.
type Quantiles struct {
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// quantiles sorts ds in place and returns its median and 99th percentile.
func quantiles(ds []time.Duration) Quantiles {
	slices.Sort(ds)
	return Quantiles{P50: rank(ds, 0.50), P99: rank(ds, 0.99)}
}

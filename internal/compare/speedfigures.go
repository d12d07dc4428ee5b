package compare

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
)

// speedFigures is what the SPEED table, its chart and the REDLOCK table
// show of one row's uncontended speed: its one measurement or, with
// -rounds, the medians over the rounds that succeeded.
type speedFigures struct {
	measured bool // false: no measurement succeeded, the cells are "-"
	ops      float64
	pair     bench.Quantiles
	cost     *Cost
	// share is ops over the ceiling's: with rounds, the median of the
	// per-round ratios, and low and high their least and greatest. NaN
	// when unknown (low and high always without rounds).
	share, low, high float64
}

// hasRounds reports whether rep was measured in rounds (-rounds > 1).
func (rep *Report) hasRounds() bool { return rep.Settings.Rounds > 1 }

// rawFigures returns the ceiling's figures: the faster of the run's
// start and end or, with rounds, the medians over its rounds.
func (rep *Report) rawFigures() speedFigures {
	if rep.hasRounds() {
		return roundFigures(rep.Raw.Rounds)
	}
	return singleFigures(rep.Raw.Speed, rep.Raw.Cost, math.NaN())
}

// techniqueFigures returns t's figures: its uncontended step against the
// ceiling or, with rounds, the medians over its rounds.
func (rep *Report) techniqueFigures(t Technique) speedFigures {
	if rep.hasRounds() {
		return roundFigures(t.SpeedRounds)
	}
	ceiling := math.NaN()
	if s := rep.Raw.Speed; s != nil && s.OpsPerSec > 0 {
		ceiling = s.OpsPerSec
	}
	return singleFigures(t.Speed, t.Cost, ceiling)
}

// singleFigures are the figures of one measurement s (nil: none) against
// ceiling (NaN: none).
func singleFigures(s *bench.Speed, c *Cost, ceiling float64) speedFigures {
	f := speedFigures{cost: c, share: math.NaN(), low: math.NaN(), high: math.NaN()}
	if s == nil {
		return f
	}
	f.measured, f.ops, f.pair = true, s.OpsPerSec, s.Pair
	if !math.IsNaN(ceiling) {
		f.share = s.OpsPerSec / ceiling
	}
	return f
}

// roundFigures are the medians over rs: of ops/s, of the pair's
// quantiles, of the cost over the rounds that measured one, and of the
// ratio to the round's ceiling over the rounds that had one, with that
// ratio's least and greatest.
func roundFigures(rs []RoundSpeed) speedFigures {
	f := speedFigures{share: math.NaN(), low: math.NaN(), high: math.NaN()}
	if len(rs) == 0 {
		return f
	}
	var ops, p50, p99, us, allocs, shares []float64
	for _, r := range rs {
		ops = append(ops, r.Speed.OpsPerSec)
		p50 = append(p50, float64(r.Speed.Pair.P50))
		p99 = append(p99, float64(r.Speed.Pair.P99))
		if r.Cost != nil {
			us = append(us, r.Cost.RedisMicrosPerPair)
			allocs = append(allocs, r.Cost.AllocsPerPair)
		}
		if r.RawOpsPerSec > 0 {
			shares = append(shares, r.Speed.OpsPerSec/r.RawOpsPerSec)
		}
	}
	f.measured, f.ops = true, median(ops)
	f.pair = bench.Quantiles{P50: time.Duration(median(p50)), P99: time.Duration(median(p99))}
	if len(us) > 0 {
		f.cost = &Cost{RedisMicrosPerPair: median(us), AllocsPerPair: median(allocs)}
	}
	if len(shares) > 0 {
		f.share, f.low, f.high = median(shares), slices.Min(shares), slices.Max(shares)
	}
	return f
}

// median returns the middle of vs, or the mean of the middle two; NaN for
// none. vs is left as it was.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// shareText renders the ratio to the ceiling, "-" when unknown.
func (f speedFigures) shareText() string {
	if math.IsNaN(f.share) {
		return "-"
	}
	return pctText(f.share)
}

// spreadText renders the per-round ratios' least and greatest, in whole
// percent: "(72–81)"; "-" when unknown.
func (f speedFigures) spreadText() string {
	if math.IsNaN(f.low) {
		return "-"
	}
	return pctSpread(f.low, f.high)
}

// roundsNote says how the rounds' figures were taken, for the SPEED
// table's head.
func roundsNote(st Settings) string {
	return fmt.Sprintf("median of %d interleaved rounds (round 1: the run's own; each further round: raw right before each technique, all on fresh nodes); of raw: per-round ratio, min–max in brackets", st.Rounds)
}

// frozenFigures is what the REDLOCK table shows of a technique's runs
// with a node frozen: one run's, or with rounds the medians of the rounds
// that froze a node, and of each such round's ratio to its own healthy
// run on the same nodes, just before it, with that ratio's least and
// greatest (a ratio taken across rounds would carry the machine's drift
// between them).
type frozenFigures struct {
	measured         bool
	ops              float64
	p99              time.Duration
	ratio, low, high float64 // NaN: no healthy run to compare with
	rounds           int     // the rounds ratio is taken over; 0 for one run
}

// frozenFigures returns t's figures with a node frozen.
func (rep *Report) frozenFigures(t Technique) frozenFigures {
	f := frozenFigures{ratio: math.NaN(), low: math.NaN(), high: math.NaN()}
	if !rep.hasRounds() || len(t.SpeedRounds) == 0 {
		if t.Frozen == nil {
			return f
		}
		f.measured, f.ops, f.p99 = true, t.Frozen.OpsPerSec, t.Frozen.Pair.P99
		if t.Speed != nil && t.Speed.OpsPerSec > 0 {
			f.ratio = t.Frozen.OpsPerSec / t.Speed.OpsPerSec
		}
		return f
	}
	var ops, p99, ratios []float64
	for _, r := range t.SpeedRounds {
		frozen := r.Frozen
		if frozen == nil && r.Round == 1 {
			frozen = t.Frozen // a report saved before rounds froze a node
		}
		if frozen == nil {
			continue
		}
		ops = append(ops, frozen.OpsPerSec)
		p99 = append(p99, float64(frozen.Pair.P99))
		if r.Speed.OpsPerSec > 0 {
			ratios = append(ratios, frozen.OpsPerSec/r.Speed.OpsPerSec)
		}
	}
	if len(ops) == 0 {
		return f
	}
	f.measured, f.ops, f.p99 = true, median(ops), time.Duration(median(p99))
	if len(ratios) > 0 {
		f.ratio, f.low, f.high = median(ratios), slices.Min(ratios), slices.Max(ratios)
	}
	if len(ratios) > 1 {
		f.rounds = len(ratios)
	}
	return f
}

// ratioText is the frozen/healthy cell: "0.95", over two rounds or more
// "0.95 (0.73–1.09)", "-" when there is no healthy run to compare with.
func (f frozenFigures) ratioText() string {
	switch {
	case math.IsNaN(f.ratio):
		return "-"
	case f.rounds == 0:
		return fmt.Sprintf("%.2f", f.ratio)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", f.ratio, f.low, f.high)
}

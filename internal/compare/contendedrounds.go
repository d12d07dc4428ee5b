package compare

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
)

// ContendedRound is one round's contended runs of a technique, apart and
// shared, with -rounds N. Round 1 is the run's own (Technique.Apart and
// Shared, or their Unfinished reasons); each further round runs both
// again on the fresh nodes of the round's uncontended measurement, right
// after it. A run that failed for another reason is in Technique.Errors
// and has neither a figure nor a reason here.
type ContendedRound struct {
	Round            int               `json:"round"` // 1 to N
	Apart            *bench.Contention `json:"apart,omitempty"`
	Shared           *bench.Contention `json:"shared,omitempty"`
	ApartUnfinished  string            `json:"apart_unfinished,omitempty"`
	SharedUnfinished string            `json:"shared_unfinished,omitempty"`
}

// contendedApart runs the workload with one Locker per worker, each built
// on the measurer's nodes. It returns the contention, or why the run did
// not finish within the bound (a result, not an error), or the error.
func (m *measurer) contendedApart(ctx context.Context) (*bench.Contention, string, error) {
	apart := make([]strategy.Locker, m.cfg.workload.Workers)
	for i := range apart {
		var err error
		if apart[i], err = m.build(m.nodes.pools); err != nil {
			return nil, "", err
		}
	}
	c, err := bench.ContendedApart(ctx, apart, m.cfg.workload)
	return outcome(c, err, m.cfg.bound)
}

// contendedShared runs the workload with every worker on l, as
// contendedApart.
func (m *measurer) contendedShared(ctx context.Context, l strategy.Locker) (*bench.Contention, string, error) {
	c, err := bench.Contended(ctx, l, m.cfg.workload)
	return outcome(c, err, m.cfg.bound)
}

// outcome reads a contended run's result against the measurement's
// bound: its figures, or why it did not finish, or its error.
func outcome(c bench.Contention, err error, bound time.Duration) (*bench.Contention, string, error) {
	if why, ok := unfinished(err, bound); ok {
		return nil, why, nil
	}
	if err != nil {
		return nil, "", err
	}
	return &c, "", nil
}

// contendedText is a contended step's progress line for what
// contendedApart or contendedShared returned.
func contendedText(c *bench.Contention, why string, err error, bound time.Duration) (string, error) {
	switch {
	case why != "":
		return unfinishedText(bound), nil
	case err != nil:
		return "", err
	}
	return contentionText(*c), nil
}

// contendedRound runs a further round's apart and then shared run on the
// measurer's nodes, the shared one on l, each bounded by the measurement's
// bound as the contended steps are. An error is returned with what the
// round measured before it.
func (m *measurer) contendedRound(ctx context.Context, l strategy.Locker, round int) (ContendedRound, error) {
	r := ContendedRound{Round: round}
	actx, cancel := context.WithTimeout(ctx, m.cfg.bound)
	var err error
	r.Apart, r.ApartUnfinished, err = m.contendedApart(actx)
	cancel()
	if err != nil {
		return r, fmt.Errorf("contended: %w", err)
	}
	sctx, cancel := context.WithTimeout(ctx, m.cfg.bound)
	defer cancel()
	if r.Shared, r.SharedUnfinished, err = m.contendedShared(sctx, l); err != nil {
		return r, fmt.Errorf("contended shared: %w", err)
	}
	return r, nil
}

// report prints r's progress lines, one for each run that finished or
// ran into the bound.
func (r ContendedRound) report(w io.Writer, bound time.Duration) {
	runs := []struct {
		kind, why string
		c         *bench.Contention
	}{{"apart", r.ApartUnfinished, r.Apart}, {"shared", r.SharedUnfinished, r.Shared}}
	for _, run := range runs {
		if run.c != nil || run.why != "" {
			text, _ := contendedText(run.c, run.why, nil, bound)
			fmt.Fprintf(w, "  %-24s contended %s: %s\n", "", run.kind, text)
		}
	}
}

// roundOne is round 1's contended runs, the run's own; ok is false when
// the run did not measure them.
func (t *Technique) roundOne() (ContendedRound, bool) {
	r := ContendedRound{Round: 1, Apart: t.Apart, Shared: t.Shared, ApartUnfinished: t.ApartUnfinished, SharedUnfinished: t.SharedUnfinished}
	return r, r.Apart != nil || r.Shared != nil || r.ApartUnfinished != "" || r.SharedUnfinished != ""
}

// contentionFigures is what CONTENDED shows of a technique's apart or its
// shared runs: one run's figures or, with rounds, each figure's median
// over the rounds that finished, utilisation's least and greatest, and
// the overlapping holders of every round added up (none is hidden by a
// median).
type contentionFigures struct {
	c         *bench.Contention // nil: none finished
	rounds    int               // the rounds whose figures c is made of; 0 without rounds
	low, high float64           // utilisation's least and greatest over those rounds
}

// contention returns t's apart (shared false) or shared figures: round 1's
// alone, or with rounds the medians over t.ContendedRounds.
func (rep *Report) contention(t Technique, shared bool) contentionFigures {
	if !rep.hasRounds() || len(t.ContendedRounds) == 0 {
		c := t.Apart
		if shared {
			c = t.Shared
		}
		return contentionFigures{c: c}
	}
	var cs []bench.Contention
	for _, r := range t.ContendedRounds {
		c := r.Apart
		if shared {
			c = r.Shared
		}
		if c != nil {
			cs = append(cs, *c)
		}
	}
	if len(cs) == 0 {
		return contentionFigures{}
	}
	var util, p50, p99, handoff []float64
	m := bench.Contention{Lockers: cs[0].Lockers}
	for _, c := range cs {
		util = append(util, c.Utilisation)
		p50 = append(p50, float64(c.Wait.P50))
		p99 = append(p99, float64(c.Wait.P99))
		handoff = append(handoff, float64(c.Handoff.P50))
		m.Sections += c.Sections
		m.Overlaps += c.Overlaps
	}
	m.Utilisation = median(util)
	m.Wait = bench.Quantiles{P50: time.Duration(median(p50)), P99: time.Duration(median(p99))}
	m.Handoff = bench.Quantiles{P50: time.Duration(median(handoff))}
	return contentionFigures{c: &m, rounds: len(cs), low: slices.Min(util), high: slices.Max(util)}
}

// utilText is the utilisation cell: "87%", with rounds "87% (82–89)".
func (f contentionFigures) utilText() string {
	if f.c == nil {
		return "-"
	}
	if f.rounds == 0 {
		return pctText(f.c.Utilisation)
	}
	return pctText(f.c.Utilisation) + " " + pctSpread(f.low, f.high)
}

package compare

import (
	"context"
	"fmt"
	"io"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// RoundSpeed is one round's uncontended measurement of a row, a technique
// or the raw ceiling, with the ceiling it is compared with. With -rounds N,
// round 1 is what the run measured anyway (each technique's uncontended
// step, against the faster of the ceilings of the run's start and end),
// and rounds 2 to N each measure, for every technique in row order, the
// ceiling and then the technique, each on fresh nodes, one right after
// the other: a row's ratio to raw is taken against a ceiling measured just
// before it, where the machine's speed has had little time to drift,
// instead of against one measured minutes away.
type RoundSpeed struct {
	Round int         `json:"round"` // 1 to N
	Speed bench.Speed `json:"speed"`
	Cost  *Cost       `json:"cost,omitempty"`
	// RawOpsPerSec is the ceiling's ops/s: round 1's, or in a further
	// round the one measured just before the row (in Raw.Rounds, the
	// ceiling's own); 0 when that ceiling failed.
	RawOpsPerSec float64 `json:"raw_ops_per_sec"`
	// Frozen is the round's uncontended run with the last node frozen, on
	// the same nodes after the round's other measurements of the row
	// (Technique.Frozen in round 1; a multi-node technique on managed
	// nodes); nil when not measured.
	Frozen *bench.Speed `json:"frozen_node,omitempty"`
}

// measureRounds records round 1's samples from what the run measured and
// then measures rounds 2 to cfg.rounds, appending each row's successes to
// its SpeedRounds (with a frozen-node run when the run made one) and,
// when the run measured it contended, its ContendedRounds (the ceiling's
// to Raw.Rounds), and its failures to its Errors (the ceiling's to
// Raw.Error). It stops early when ctx ends.
// rep.Techniques[i] must be the row of cfg.techniques[i], as compare
// appends them.
func measureRounds(ctx context.Context, cfg config, rep *Report, progress io.Writer) {
	var ceiling float64
	if s := rep.Raw.Speed; s != nil {
		ceiling = s.OpsPerSec
		rep.Raw.Rounds = append(rep.Raw.Rounds, RoundSpeed{Round: 1, Speed: *s, Cost: rep.Raw.Cost, RawOpsPerSec: ceiling})
	}
	for i := range rep.Techniques {
		t := &rep.Techniques[i]
		if t.Speed != nil {
			t.SpeedRounds = append(t.SpeedRounds, RoundSpeed{Round: 1, Speed: *t.Speed, Cost: t.Cost, RawOpsPerSec: ceiling, Frozen: t.Frozen})
		}
		if r, ok := t.roundOne(); ok {
			t.ContendedRounds = append(t.ContendedRounds, r)
		}
	}
	for round := 2; round <= cfg.rounds && ctx.Err() == nil; round++ {
		fmt.Fprintf(progress, "round %d of %d: the ceiling and then a technique, uncontended, contended and with a node frozen (where the run measured them), for each technique, on fresh nodes\n", round, cfg.rounds)
		measureRound(ctx, cfg, rep, round, progress)
	}
}

// measureRound measures one round: for every technique of rep, in row
// order, the ceiling and then the technique, one right after the other,
// so that each row's ratio is taken against a ceiling measured seconds
// before it, not one measured before every row ahead of it; the
// technique's contended runs, and last its frozen-node run, follow its
// uncontended one on its nodes.
func measureRound(ctx context.Context, cfg config, rep *Report, round int, progress io.Writer) {
	for i := range rep.Techniques {
		if ctx.Err() != nil {
			return
		}
		ceiling := measureCeiling(ctx, cfg, rep, round, progress)
		t := &rep.Techniques[i]
		s, err := measureInRound(ctx, cfg, cfg.techniques[i], t.Nodes, round, len(t.ContendedRounds) > 0, t.Frozen != nil)
		if s.speed != nil {
			t.SpeedRounds = append(t.SpeedRounds, RoundSpeed{Round: round, Speed: *s.speed, Cost: s.cost, RawOpsPerSec: ceiling, Frozen: s.frozen})
			share := ""
			if ceiling > 0 {
				share = ", " + pctText(s.speed.OpsPerSec/ceiling) + " of raw"
			}
			fmt.Fprintf(progress, "  %-24s %s%s\n", t.Name, speedText(*s.speed, s.cost), share)
		}
		if s.contended != nil {
			t.ContendedRounds = append(t.ContendedRounds, *s.contended)
			s.contended.report(progress, cfg.bound)
		}
		if s.frozen != nil {
			fmt.Fprintf(progress, "  %-24s one node frozen: %s\n", "", speedText(*s.frozen, nil))
		}
		if err != nil {
			t.Errors = append(t.Errors, fmt.Sprintf("round %d: %v", round, err))
			fmt.Fprintf(progress, "  %-24s failed: %v\n", t.Name, err)
		}
	}
}

// measureCeiling measures the ceiling in round, appending it to
// rep.Raw.Rounds, and returns its ops/s; on failure it records the error
// in rep.Raw.Error and returns 0.
func measureCeiling(ctx context.Context, cfg config, rep *Report, round int, progress io.Writer) float64 {
	speed, cost, _, err := measureRaw(ctx, cfg)
	if err != nil {
		e := fmt.Sprintf("round %d: uncontended: %v", round, err)
		if rep.Raw.Error != "" {
			e = rep.Raw.Error + "; " + e
		}
		rep.Raw.Error = e
		fmt.Fprintf(progress, "  %-24s failed: %v\n", RawName, err)
		return 0
	}
	rep.Raw.Rounds = append(rep.Raw.Rounds, RoundSpeed{Round: round, Speed: speed, Cost: cost, RawOpsPerSec: speed.OpsPerSec})
	fmt.Fprintf(progress, "  %-24s %s\n", RawName, speedText(speed, cost))
	return speed.OpsPerSec
}

// inRound is what a further round measured of a technique: its
// uncontended pairs and their cost, its contended runs and its run with a
// node frozen when asked; nil where that was not measured or failed.
type inRound struct {
	speed     *bench.Speed
	cost      *Cost
	contended *ContendedRound
	frozen    *bench.Speed
}

// measureInRound measures target uncontended, and its cost, on n fresh
// nodes (or cfg.addrs), as its uncontended step does, then, when
// contended is true, its apart and shared runs on the same nodes, as its
// contended steps do, and last, when frozen is true and the nodes are
// the harness's, its run with the last node frozen, as its frozen step
// does. It stops at the first failure, returning what it measured before
// it; the error says what failed: "build: ...", "uncontended: ...",
// "contended: ...", "contended shared: ...", "one node frozen: ..." or
// "nodes: ...".
func measureInRound(ctx context.Context, cfg config, target strategytest.Target, n, round int, contended, frozen bool) (inRound, error) {
	var (
		r   inRound
		err error
	)
	d := redistest.NewDetached("lockcompare-round-" + target.Name)
	runErr := d.Run(func() {
		m := &measurer{cfg: cfg, target: target, nodes: startNodes(d, cfg, n, target.Replicas)}
		defer m.settle()
		l, buildErr := m.build(m.nodes.pools)
		if buildErr != nil {
			err = fmt.Errorf("build: %w", buildErr)
			return
		}
		uctx, cancel := context.WithTimeout(ctx, cfg.bound)
		speed, cost, uerr := m.uncontended(uctx, l)
		cancel()
		if uerr != nil {
			err = fmt.Errorf("uncontended: %w", uerr)
			return
		}
		r.speed, r.cost = &speed, cost
		if contended {
			c, cerr := m.contendedRound(ctx, l, round)
			if r.contended = &c; cerr != nil {
				err = cerr
				return
			}
		}
		if frozen && len(m.nodes.managed) > 1 {
			fctx, cancel := context.WithTimeout(ctx, cfg.bound)
			defer cancel()
			f, ferr := m.frozen(fctx, l)
			if ferr != nil {
				err = fmt.Errorf("one node frozen: %w", ferr)
				return
			}
			r.frozen = &f
		}
	})
	if runErr != nil {
		return r, fmt.Errorf("nodes: %w", runErr)
	}
	return r, err
}

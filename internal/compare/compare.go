package compare

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// Report is everything one run measured; -json writes it as it is.
type Report struct {
	Started    time.Time     `json:"started"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Backend    string        `json:"backend"` // "docker" or "process" (nodes from the harness), "addrs", or "sentinel"
	Settings   Settings      `json:"settings"`
	Scenarios  []string      `json:"scenarios"`
	Techniques []Technique   `json:"techniques"`
	Raw        Raw           `json:"raw"`
	// Interrupted says the run ended early (ctx ended) and what is here is
	// what had been measured by then.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Settings are the measurement parameters of a run.
type Settings struct {
	Addrs []string `json:"addrs,omitempty"`
	// Sentinels and Masters are -sentinel and -master: the run went
	// through Sentinel to these masters.
	Sentinels []string       `json:"sentinels,omitempty"`
	Masters   []string       `json:"masters,omitempty"`
	Bench     time.Duration  `json:"bench_ns"`             // each uncontended measurement
	Workers   int            `json:"workers"`              // uncontended goroutines
	Workload  bench.Workload `json:"workload"`             // the contended run
	Pairs     int            `json:"trip_pairs"`           // pairs counted for round trips
	Crowds    []int          `json:"contenders,omitempty"` // many-contenders runs, by number of contenders
	// Rounds is -rounds when more than 1: the uncontended measurements
	// per row, in interleaved rounds (see RoundSpeed). 0 for the default,
	// the one measurement of each row's steps.
	Rounds int `json:"rounds,omitempty"`
	// Bound is -bound, the longest each measurement may run; 0 in a
	// report written before the flag existed, which ran with defaultBound.
	Bound time.Duration `json:"bound_ns,omitempty"`

	// Cluster are the masters of the Redis Cluster a -cluster run went
	// through (a cluster.Pool); empty otherwise.
	Cluster []string `json:"cluster,omitempty"`
}

// bound is the bound st's measurements ran with: Bound, or defaultBound
// when the report does not say.
func (st Settings) bound() time.Duration {
	if st.Bound > 0 {
		return st.Bound
	}
	return defaultBound
}

// Technique is one technique's verdicts and measurements. A measurement
// that could not complete is nil, with the reason in Errors.
type Technique struct {
	Name        string                `json:"name"`
	Nodes       int                   `json:"nodes"`
	Properties  *strategy.Properties  `json:"properties,omitempty"`
	Results     []strategytest.Result `json:"results"`
	Speed       *bench.Speed          `json:"speed,omitempty"`        // round 1's, with -rounds
	Cost        *Cost                 `json:"cost,omitempty"`         // of the uncontended pairs
	SpeedRounds []RoundSpeed          `json:"speed_rounds,omitempty"` // with -rounds: every round that succeeded, Speed's first
	Frozen      *bench.Speed          `json:"frozen_node,omitempty"`  // uncontended, one node frozen (multi-node, managed nodes only)
	Trips       *bench.Trips          `json:"round_trips,omitempty"`
	Apart       *bench.Contention     `json:"contended_apart,omitempty"`  // one Locker per worker
	Shared      *bench.Contention     `json:"contended_shared,omitempty"` // one Locker for all workers
	Crowds      []Crowd               `json:"contenders,omitempty"`       // many contenders, a Locker each
	// ApartUnfinished and SharedUnfinished say why that contended run did
	// not finish its sections within the measurement's bound (a Lock gave
	// up when the bound ended): a result the technique earned, shown
	// under the CONTENDED table, not a failed measurement (as Crowd's
	// Unfinished). Empty when it finished or was not run.
	ApartUnfinished  string `json:"contended_apart_unfinished,omitempty"`
	SharedUnfinished string `json:"contended_shared_unfinished,omitempty"`
	// ContendedRounds, with -rounds, holds every round's apart and shared
	// runs, round 1's from Apart and Shared, when the run measured them.
	ContendedRounds []ContendedRound `json:"contended_rounds,omitempty"`
	Errors          []string         `json:"errors,omitempty"`
	// Known holds, by scenario, why a verdict that contradicts the
	// technique's claims is a known finding about a peer (KnownFinding):
	// shown with its account, not a problem of the run.
	Known map[string]string `json:"known_findings,omitempty"`
}

// Raw is the ceiling row: bare SET NX PX + EVALSHA on one node, measured
// at the start of the run and again at the end, so that a passing load on
// the machine does not lower the ceiling. Speed is the faster of Runs.
// With -rounds, Rounds holds every measurement of the ceiling that
// succeeded: round 1's is Speed, and each further round measures it again
// before each technique.
type Raw struct {
	Speed  *bench.Speed  `json:"speed,omitempty"`
	Cost   *Cost         `json:"cost,omitempty"` // of the run in Speed
	Runs   []bench.Speed `json:"runs,omitempty"`
	Rounds []RoundSpeed  `json:"rounds,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// add records one measurement of the ceiling and its cost.
func (r *Raw) add(s bench.Speed, c *Cost) {
	r.Runs = append(r.Runs, s)
	if r.Speed == nil || s.OpsPerSec > r.Speed.OpsPerSec {
		r.Speed = &r.Runs[len(r.Runs)-1]
		r.Cost = c
	}
}

// RawName labels the ceiling row.
const RawName = "raw SET NX PX + EVALSHA"

// result returns the technique's result for scenario, if it ran.
func (t Technique) result(scenario string) (strategytest.Result, bool) {
	for _, r := range t.Results {
		if r.Scenario == scenario {
			return r, true
		}
	}
	return strategytest.Result{}, false
}

// Problems lists what makes the run unsuccessful: verdicts that contradict
// a technique's claims (but for known findings about peers, which
// KnownFindings lists), scenarios and measurements that failed, and an
// interrupted run.
func (rep *Report) Problems() []string {
	var out []string
	if rep.Interrupted {
		out = append(out, "the run was interrupted")
	}
	for _, t := range rep.Techniques {
		for _, r := range t.Results {
			if expected, judged := r.Expected(); judged && !expected && !t.isKnown(r.Scenario) {
				out = append(out, r.String())
			}
		}
		for _, e := range t.Errors {
			out = append(out, t.Name+": "+e)
		}
	}
	if rep.Raw.Error != "" {
		out = append(out, RawName+": "+rep.Raw.Error)
	}
	return out
}

// compare runs the suite and the measurements that cfg asks for, reporting
// progress to progress. It stops early, returning what it has with
// Interrupted set, when ctx ends.
func compare(ctx context.Context, cfg config, progress io.Writer) *Report {
	rep := &Report{
		Started:   time.Now(),
		Backend:   "addrs",
		Scenarios: cfg.scenarios,
		Settings: Settings{
			Addrs: cfg.addrs, Sentinels: cfg.sentinels, Masters: cfg.masters,
			Bench: cfg.bench, Workers: cfg.workers,
			Workload: cfg.workload, Pairs: cfg.pairs, Crowds: cfg.crowds,
			Bound: cfg.bound,
		},
	}
	if cfg.rounds > 1 {
		rep.Settings.Rounds = cfg.rounds
	}
	defer func() { rep.Elapsed = time.Since(rep.Started) }()
	where := "fresh Redis nodes from the harness"
	if len(cfg.addrs) > 0 {
		where = fmt.Sprintf("the servers at %v", cfg.addrs)
	}
	if len(cfg.sentinels) > 0 {
		where = fmt.Sprintf("the masters %v through the Sentinels at %v", cfg.masters, cfg.sentinels)
	}
	if cp, ok := cfg.pool.(*cluster.Pool); ok {
		rep.Settings.Cluster = cp.Masters()
		where = fmt.Sprintf("the Redis Cluster of masters %v (a cluster.Pool)", rep.Settings.Cluster)
	}
	fmt.Fprintf(progress, "lockcompare: %d techniques x %d scenarios, then the benchmarks, on %s\n",
		len(cfg.techniques), len(cfg.scenarios), where)

	ceiling := func() {
		fmt.Fprintf(progress, "%s\n", RawName)
		speed, cost, backend, err := measureRaw(ctx, cfg)
		if backend != "" {
			rep.Backend = backend
		}
		if err != nil {
			rep.Raw.Error = err.Error()
			fmt.Fprintf(progress, "  %-20s failed: %v\n", "uncontended", err)
			return
		}
		rep.Raw.add(speed, cost)
		fmt.Fprintf(progress, "  %-20s %s\n", "uncontended", speedText(speed, cost))
	}
	ceiling()

	for _, target := range cfg.techniques {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(progress, "%s\n", target.Name)
		t := Technique{Name: target.Name, Nodes: max(target.Nodes, 1)}
		results, err := strategytest.Evaluate(ctx, target, strategytest.Options{
			Addrs:     cfg.addrs,
			Sentinels: cfg.sentinels,
			Masters:   cfg.masters,
			Pool:      cfg.pool,
			Scenarios: cfg.scenarios,
			Progress: func(r strategytest.Result) {
				fmt.Fprintf(progress, "  %-20s %-15s %d/%d  %s\n", r.Scenario, r.Verdict, r.Violations, r.Attempts, r.Elapsed.Round(10*time.Millisecond))
			},
		})
		t.Results = results
		markKnown(&t, cfg.known)
		if err != nil {
			rep.Techniques = append(rep.Techniques, t)
			break
		}
		measureTechnique(ctx, cfg, target, &t, progress)
		rep.Techniques = append(rep.Techniques, t)
	}
	if ctx.Err() == nil && rep.Raw.Error == "" {
		ceiling()
	}
	if cfg.rounds > 1 {
		measureRounds(ctx, cfg, rep, progress)
	}
	rep.Interrupted = ctx.Err() != nil
	return rep
}

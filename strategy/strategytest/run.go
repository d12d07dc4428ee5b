package strategytest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// scenarioBound caps one scenario, setup included.
const scenarioBound = 2 * time.Minute

// Run runs every scenario on target as a subtest against fresh Redis nodes
// from the harness (internal/redistest: Docker or redis-server; the test
// fails, never skips, when neither is there). A subtest fails when a claimed
// property shows a violation, when one of lockzoo's own techniques does not
// claim a property and the scenario fails to reproduce the violation, or
// when the scenario cannot complete. Each result is logged.
func Run(t *testing.T, target Target) {
	t.Helper()
	for _, s := range scenarios() {
		t.Run(s.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), scenarioBound)
			defer cancel()
			e, err := newEnv(t, target, Options{}, s)
			if err != nil {
				t.Fatalf("setup: %v", err)
			}
			r := s.execute(ctx, e)
			t.Log(r.String())
			if expected, judged := r.Expected(); judged && !expected {
				t.Errorf("%s: %s claimed=%v, verdict %s (%d/%d violations), want %s: %s",
					r.Scenario, r.Property, r.Claimed, r.Verdict, r.Violations, r.Attempts, want(r), r.Account)
			}
		})
	}
}

func want(r Result) Verdict {
	if r.Claimed {
		return Holds
	}
	return Violated
}

// Evaluate runs the scenarios on target and returns their results, in
// scenario order. Unless opts.Addrs names existing servers, each scenario
// gets fresh nodes from the harness, torn down when it ends. A scenario that
// cannot complete yields a Result with Verdict Failed; Evaluate's error is
// reserved for ctx ending and bad options.
func Evaluate(ctx context.Context, target Target, opts Options) ([]Result, error) {
	if target.New == nil {
		return nil, fmt.Errorf("lockzoo: strategytest: Target.New is nil")
	}
	var results []Result
	for _, s := range scenarios() {
		if len(opts.Scenarios) > 0 && !slices.Contains(opts.Scenarios, s.name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return results, err
		}
		r := evaluateOne(ctx, s, target, opts)
		results = append(results, r)
		if opts.Progress != nil {
			opts.Progress(r)
		}
	}
	return results, nil
}

// evaluateOne runs one scenario under a detached TB, so that a harness
// failure (Fatalf) ends the scenario, not the program.
func evaluateOne(ctx context.Context, s scenario, target Target, opts Options) Result {
	ctx, cancel := context.WithTimeout(ctx, scenarioBound)
	defer cancel()
	tb := redistest.NewDetached(target.Name + "/" + s.name)
	var r Result
	err := tb.Run(func() {
		e, err := newEnv(tb, target, opts, s)
		if err != nil {
			tb.Fatalf("setup: %v", err)
		}
		r = s.execute(ctx, e)
	})
	if err != nil {
		name := target.Name
		if name == "" {
			name = "(unnamed target)" // the Locker that would name it was never built
		}
		r = Result{Technique: name, Scenario: s.name, Property: s.property, Verdict: Failed, Account: err.Error()}
	}
	return r
}

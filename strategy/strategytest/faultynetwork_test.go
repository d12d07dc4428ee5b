package strategytest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
	watchmulti "github.com/lockzoo/lockzoo/watch_multi"
)

// TestFaultyNetworkVerdicts runs the faulty-network scenarios on two
// article techniques and checks how their results are judged: the runs are
// black-box; watch_multi, whose release is owner-safe, claims exclusion
// and must hold it; set_nx_ex claims neither exclusion under faults nor
// fencing, and its verdicts are reported, not judged. Sections must have
// run, or the verdicts would say nothing.
func TestFaultyNetworkVerdicts(t *testing.T) {
	targets := []struct {
		target  strategytest.Target
		claimed map[string]bool
	}{
		{
			target: strategytest.Target{Name: "watch_multi", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
				return watchmulti.New(p[0], c)
			}},
			claimed: map[string]bool{"faulty-network": true, "faulty-network-fencing": false},
		},
		{
			target: strategytest.Target{Name: "set_nx_ex", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
				return setnxex.New(p[0], c)
			}},
			claimed: map[string]bool{"faulty-network": false, "faulty-network-fencing": false},
		},
	}
	for _, tc := range targets {
		t.Run(tc.target.Name, func(t *testing.T) {
			t.Parallel()
			results, err := strategytest.Evaluate(context.Background(), tc.target, strategytest.Options{
				Scenarios: []string{"faulty-network", "faulty-network-fencing"},
			})
			require.NoError(t, err)
			require.Len(t, results, 2)
			for _, r := range results {
				t.Log(r.String())
				assert.NotEqual(t, strategytest.Failed, r.Verdict, "%s: %s", r.Scenario, r.Account)
				assert.False(t, r.WhiteBox, "%s: WhiteBox, want a black-box run (the faults are the network's)", r.Scenario)
				assert.Equal(t, tc.claimed[r.Scenario], r.Claimed, "%s: Claimed", r.Scenario)
				assert.Positive(t, r.Attempts, "%s: sections run", r.Scenario)
				expected, judged := r.Expected()
				if r.Claimed {
					assert.True(t, judged && expected, "%s: Expected() = %v, %v; want true, true: %s", r.Scenario, expected, judged, r.Account)
				} else {
					assert.False(t, judged, "%s: an unclaimed property under faults is reported, not judged", r.Scenario)
				}
				if r.Scenario == "faulty-network-fencing" {
					// set_nx_ex and watch_multi issue no fences: every
					// section after the first on a key repeats fence 0.
					assert.Equal(t, strategytest.Violated, r.Verdict, "%s: fences of a technique without fencing", r.Scenario)
				}
			}
		})
	}
}

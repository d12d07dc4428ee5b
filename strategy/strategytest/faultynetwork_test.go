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

// TestFaultyNetworkVerdicts runs the faulty-network scenario on two
// article techniques and checks how their results are judged: the runs are
// black-box; watch_multi, whose release is owner-safe, claims exclusion
// and must hold it; set_nx_ex does not claim exclusion under faults, and
// its verdict is reported, not judged. Sections must have run, or the
// verdicts would say nothing.
func TestFaultyNetworkVerdicts(t *testing.T) {
	targets := []struct {
		target  strategytest.Target
		claimed bool
	}{
		{
			target: strategytest.Target{Name: "watch_multi", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
				return watchmulti.New(p[0], c)
			}},
			claimed: true,
		},
		{
			target: strategytest.Target{Name: "set_nx_ex", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
				return setnxex.New(p[0], c)
			}},
			claimed: false,
		},
	}
	for _, tc := range targets {
		t.Run(tc.target.Name, func(t *testing.T) {
			t.Parallel()
			results, err := strategytest.Evaluate(context.Background(), tc.target, strategytest.Options{
				Scenarios: []string{"faulty-network"},
			})
			require.NoError(t, err)
			require.Len(t, results, 1)
			for _, r := range results {
				t.Log(r.String())
				assert.NotEqual(t, strategytest.Failed, r.Verdict, "%s: %s", r.Scenario, r.Account)
				assert.False(t, r.WhiteBox, "%s: WhiteBox, want a black-box run (the faults are the network's)", r.Scenario)
				assert.Equal(t, tc.claimed, r.Claimed, "%s: Claimed", r.Scenario)
				assert.Positive(t, r.Attempts, "%s: sections run", r.Scenario)
				expected, judged := r.Expected()
				if r.Claimed {
					assert.True(t, judged && expected, "%s: Expected() = %v, %v; want true, true: %s", r.Scenario, expected, judged, r.Account)
				} else {
					assert.False(t, judged, "%s: an unclaimed property under faults is reported, not judged", r.Scenario)
				}
				assert.Contains(t, r.Account, "no fences (not claimed)", "%s: a technique without fencing is not judged on its fences", r.Scenario)
			}
		})
	}
}

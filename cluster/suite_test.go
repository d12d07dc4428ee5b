package cluster_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// testSuite runs the race-condition suite through the Pool
// (strategytest.Options.Pool): every verdict is the expected one, as on
// one node, bar the scenarios that need managed nodes or the nodes'
// addresses.
func testSuite(t *testing.T, _ *redistest.Cluster, p *cluster.Pool) {
	// Within the CI's budget: lua_release, and watch_multi for the
	// transactions. Every single-node technique passes (40 s here), and
	// lockcompare -cluster runs them all.
	suiteTechniques := []string{"watch_multi", "lua_release"}
	for _, target := range techniques.All() {
		if !slices.Contains(suiteTechniques, target.Name) {
			continue
		}
		t.Run(target.Name, func(t *testing.T) {
			results, err := strategytest.Evaluate(context.Background(), target, strategytest.Options{Pool: p})
			require.NoError(t, err)
			for _, r := range results {
				expected, judged := r.Expected()
				assert.True(t, expected, "%s: %v", r.Scenario, r)
				if judged {
					t.Logf("%s", r)
				}
			}
		})
	}
}

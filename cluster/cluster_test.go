package cluster_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestCluster runs the tests on real clusters: three of 3 masters each,
// shared by the tests that leave them as they found them, so that a run
// starts three clusters rather than one per test. The first serves the
// routing, contention and measurement tests, the second the tests that
// move slots, the third the test that takes a slot away (last); redlock
// runs over all three as its nodes.
func TestCluster(t *testing.T) {
	var (
		cs    [3]*redistest.Cluster
		ps    [3]*cluster.Pool
		pools []strategy.Pool
	)
	for i := range cs {
		cs[i] = redistest.StartCluster(t)
		ps[i] = newPool(t, cs[i])
		pools = append(pools, ps[i])
	}
	for _, tc := range []struct {
		name string
		i    int
		test func(*testing.T, *redistest.Cluster, *cluster.Pool)
	}{
		{"routing", 0, testRouting},
		{"contention across masters", 0, testContentionAcrossMasters},
		{"every technique", 0, testEveryTechnique},
		{"brace keys", 0, testBraceKeys},
		{"spread over masters", 0, testSpreadOverMasters},
		{"shard notices stay in the shard", 0, testShardNoticesStayInTheShard},
		{"suite", 0, testSuite},
		{"redirections", 1, testRedirections},
		{"resharding under contention", 1, testReshardingUnderContention},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, cs[tc.i], ps[tc.i]) })
	}
	t.Run("redlock over three clusters", func(t *testing.T) { testRedlockOverClusters(t, cs[0], pools) })
	t.Run("cluster down", func(t *testing.T) { testClusterDown(t, cs[2], ps[2]) })
	t.Run("closed pool", func(t *testing.T) { testClosedPool(t, cs[0]) })
}

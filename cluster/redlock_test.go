package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// testRedlockOverClusters runs redlock over three clusters, one Pool
// each, as its independent nodes: contention over keys on every master of
// the first keeps mutual exclusion and increasing fences.
func testRedlockOverClusters(t *testing.T, first *redistest.Cluster, pools []strategy.Pool) {
	keys := spreadN(t, first, "rl:", 12, lockName)
	tl := newTally(keys)
	var ls []strategy.Locker
	for range 2 {
		l, err := redlock.New(pools, redlock.Config{Config: strategy.Config{TTL: 10 * time.Second}})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		ls = append(ls, l)
	}
	stop := make(chan struct{})
	close(stop)
	tl.contend(ls, keys, 15, stop)
	tl.check(t)
}

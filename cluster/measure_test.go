package cluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// testSpreadOverMasters locks 3,000 random names' worth of keys: each
// master's share of them is within ±15% of a third.
func testSpreadOverMasters(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	rng := rand.New(rand.NewPCG(30, 3000))
	count := map[string]int{}
	const names = 3000
	for range names {
		addr, err := p.MasterOf(lockName(fmt.Sprintf("job-%x", rng.Uint64())))
		require.NoError(t, err)
		count[addr]++
	}
	for _, m := range c.Masters() {
		share := float64(count[m.Addr()]) / names
		t.Logf("master %s: %d of %d names (%.1f%%)", m.Addr(), count[m.Addr()], names, 100*share)
		assert.InDelta(t, 1.0/3, share, 0.15/3, "share of master %s", m.Addr())
	}
}

// testShardNoticesStayInTheShard publishes release-sized notices on a
// lock's channel: classic PUBLISH reaches every other master over the
// cluster bus, SPUBLISH none (CLUSTER INFO's publish messages received,
// and INFO's total_net_input_bytes, on the masters that do not hold the
// key).
func testShardNoticesStayInTheShard(t *testing.T, c *redistest.Cluster, _ *cluster.Pool) {
	ctx := context.Background()
	const ch, n = "lock:{orders:42}:notice:8c1f6a2e-locker", 500
	holder := c.NodeFor(ch)
	var others []*redistest.Node
	for _, m := range c.Masters() {
		if m != holder {
			others = append(others, m)
		}
	}
	// SPUBLISH first: PUBLISH's messages reach the other masters a moment
	// after its calls return.
	for _, cmd := range []string{"SPUBLISH", "PUBLISH"} {
		msgs, bytes := busStats(t, others)
		for range n {
			_, err := redisconn.Do(ctx, holder.Pool(), cmd, ch, "handoff:1733261234000001:0f3c5a1e-9d2b-4b7a-8e61-2f0c9d4a7b13")
			require.NoError(t, err, "%s", cmd)
		}
		msgs2, bytes2 := busStats(t, others)
		t.Logf("%s x%d: publish messages received over the cluster bus by the other masters %d; their total_net_input_bytes %d (which counts clients, not the bus)",
			cmd, n, msgs2-msgs, bytes2-bytes)
		if cmd == "SPUBLISH" {
			assert.Zero(t, msgs2-msgs, "SPUBLISH messages on the other masters")
		} else {
			assert.Positive(t, msgs2-msgs, "PUBLISH messages on the other masters")
		}
	}
}

// busStats sums over nodes the publish messages received over the cluster
// bus (CLUSTER INFO) and total_net_input_bytes (INFO stats).
func busStats(t *testing.T, nodes []*redistest.Node) (msgs, bytes int64) {
	t.Helper()
	for _, m := range nodes {
		ci, err := redis.String(m.Do("CLUSTER", "INFO"))
		require.NoError(t, err)
		f := redisinfo.Fields(ci)
		for _, k := range []string{"cluster_stats_messages_publish_received", "cluster_stats_messages_publishshard_received"} {
			v, _ := strconv.ParseInt(f[k], 10, 64)
			msgs += v
		}
		st, err := redis.String(m.Do("INFO", "stats"))
		require.NoError(t, err)
		v, _ := strconv.ParseInt(redisinfo.Fields(st)["total_net_input_bytes"], 10, 64)
		bytes += v
	}
	return msgs, bytes
}

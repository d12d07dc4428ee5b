package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLuaReleasePairs measures uncontended lua_release Lock+Unlock
// pairs (ops/s is pairs/s) and the Redis CPU they cost
// (redis-cpu-µs/op, summed over the servers named):
//
//   - cluster-spread: through a cluster.Pool, keys over every master (CPU
//     summed over the masters);
//   - cluster-one-master: through a cluster.Pool, every key on one master
//     (a prefix with a hash tag);
//   - direct-master: the same keys through a redis.Pool to that master;
//   - one-node: a standalone node (no cluster mode).
func BenchmarkLuaReleasePairs(b *testing.B) {
	c := redistest.StartCluster(b)
	p := newPool(b, c)
	const tagged = "{bench}:"
	master := c.NodeFor(tagged)
	single := redistest.Start(b, 1)[0]
	for _, bc := range []struct {
		name   string
		pool   strategy.Pool
		prefix string
		nodes  []*redistest.Node
	}{
		{"cluster-spread", p, "", c.Masters()},
		{"cluster-one-master", p, tagged, c.Masters()},
		{"direct-master", master.Pool(), tagged, []*redistest.Node{master}},
		{"one-node", single.Pool(), "", []*redistest.Node{single}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := luarelease.New(bc.pool, strategy.Config{TTL: 10 * time.Second, Prefix: bc.prefix})
			require.NoError(b, err)
			defer l.Close()
			defer locktest.ReportRedisCPU(b, bc.nodes...)()
			locktest.BenchLockUnlock(b, l)
		})
	}
}

package cluster_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkLuaReleasePairs measures uncontended lua_release Lock+Unlock
// pairs (ops/s is pairs/s) and the Redis CPU they cost: the servers' main
// threads, from INFO cpu before and after, summed over the servers named
// (redis-main-cpu-µs/op). It runs benchRounds rounds of the cases, in
// turn (-count would run each case's counts one after the other).
//
//   - cluster-spread: through a cluster.Pool, keys over every master (CPU
//     summed over the masters);
//   - cluster-one-master: through a cluster.Pool, every key on one master
//     (a prefix with a hash tag);
//   - direct-master: the same keys through a redis.Pool to that master;
//   - one-node: a standalone node (no cluster mode);
//   - three-nodes: three standalone nodes, one Locker each, each key on
//     the node of the index of its cluster master, so the keys spread as
//     in cluster-spread (CPU summed over the three).
func BenchmarkLuaReleasePairs(b *testing.B) {
	c := redistest.StartCluster(b)
	p := newPool(b, c)
	const tagged = "{bench}:"
	master := c.NodeFor(tagged)
	single := redistest.Start(b, 1)[0]
	three := redistest.Start(b, 3)
	index := map[string]int{}
	for i, m := range c.Masters() {
		index[m.Addr()] = i
	}
	cases := []struct {
		name string
		run  func(b *testing.B)
	}{
		{"cluster-spread", func(b *testing.B) { benchPairs(b, c.Masters(), p) }},
		{"cluster-one-master", func(b *testing.B) { benchPairs(b, c.Masters(), p, strategy.Config{Prefix: tagged}) }},
		{"direct-master", func(b *testing.B) {
			benchPairs(b, []*redistest.Node{master}, master.Pool(), strategy.Config{Prefix: tagged})
		}},
		{"one-node", func(b *testing.B) { benchPairs(b, []*redistest.Node{single}, single.Pool()) }},
		{"three-nodes", func(b *testing.B) {
			var ls []strategy.Locker
			for _, n := range three {
				l, err := luarelease.New(n.Pool(), strategy.Config{TTL: 10 * time.Second})
				require.NoError(b, err)
				b.Cleanup(func() { l.Close() })
				ls = append(ls, l)
			}
			defer reportMainCPU(b, three)()
			locktest.BenchParallel(b, func(ctx context.Context, key string) error {
				addr, err := p.MasterOf(protocol.LockKey(strategy.DefaultPrefix, key))
				if err != nil {
					return err
				}
				lease, err := ls[index[addr]%len(ls)].Lock(ctx, key)
				if err != nil {
					return err
				}
				return lease.Unlock(ctx)
			})
		}},
	}
	for round := range benchRounds {
		for _, bc := range cases {
			b.Run(bc.name+"/round"+strconv.Itoa(round+1), bc.run)
		}
	}
}

// benchRounds is how many times BenchmarkLuaReleasePairs runs each case,
// the cases in turn, so that a change of the machine's load falls on all.
const benchRounds = 3

// benchPairs runs BenchLockUnlock with a lua_release Locker over pool
// (cfg's Prefix, if any), reporting the main-thread CPU of nodes.
func benchPairs(b *testing.B, nodes []*redistest.Node, pool strategy.Pool, cfg ...strategy.Config) {
	b.Helper()
	c := strategy.Config{TTL: 10 * time.Second}
	if len(cfg) > 0 {
		c.Prefix = cfg[0].Prefix
	}
	l, err := luarelease.New(pool, c)
	require.NoError(b, err)
	defer l.Close()
	defer reportMainCPU(b, nodes)()
	locktest.BenchLockUnlock(b, l)
}

// reportMainCPU reads the main-thread CPU of nodes now and returns the
// function that reports what they used since, per op.
func reportMainCPU(b *testing.B, nodes []*redistest.Node) func() {
	b.Helper()
	before := mainCPU(b, nodes)
	return func() {
		b.Helper()
		b.ReportMetric((mainCPU(b, nodes)-before).Seconds()*1e6/float64(b.N), "redis-main-cpu-µs/op")
	}
}

// mainCPU is the CPU time the main threads of the servers behind nodes
// have used (INFO cpu: used_cpu_user_main_thread + used_cpu_sys_main_thread).
func mainCPU(b *testing.B, nodes []*redistest.Node) time.Duration {
	b.Helper()
	var total float64
	for _, n := range nodes {
		info, err := redis.String(n.Do("INFO", "cpu"))
		require.NoError(b, err, "INFO cpu on %s", n.Addr())
		fields := redisinfo.Fields(info)
		for _, field := range []string{"used_cpu_user_main_thread", "used_cpu_sys_main_thread"} {
			s, err := strconv.ParseFloat(fields[field], 64)
			require.NoError(b, err, "INFO cpu on %s: %s = %q", n.Addr(), field, fields[field])
			total += s
		}
	}
	return time.Duration(total * float64(time.Second))
}

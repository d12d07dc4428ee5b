// Package techniques lists every lockzoo technique as a strategytest.Target,
// once, for the integration tests and cmd/lockcompare.
//
//	import "github.com/lockzoo/lockzoo/internal/techniques"
package techniques

import (
	"time"

	getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
	"github.com/lockzoo/lockzoo/getset_timestamp/method1"
	"github.com/lockzoo/lockzoo/getset_timestamp/method2"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/redlock"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	setnxexpire "github.com/lockzoo/lockzoo/setnx_expire"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
	watchmulti "github.com/lockzoo/lockzoo/watch_multi"
)

// RedlockNodes is how many independent masters redlock runs on in the
// suite and the comparison.
const RedlockNodes = 5

// All returns every technique, the article techniques first and the
// production ones last; article 004's methods 1 and 2 come just before
// getset_timestamp, its method 3, which they lead to.
func All() []strategytest.Target {
	return []strategytest.Target{
		single("setnx_expire", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return setnxexpire.New(p, c) }),
		single("getset_timestamp/method1", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return method1.New(p, c) }),
		single("getset_timestamp/method2", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return method2.New(p, c) }),
		single("getset_timestamp", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return getsettimestamp.New(p, c) }),
		single("watch_multi", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return watchmulti.New(p, c) }),
		single("set_nx_ex", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return setnxex.New(p, c) }),
		failover(single("lua_release", func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) { return luarelease.New(p, c) })),
		{
			Name:  "redlock",
			Nodes: RedlockNodes,
			New: func(pools []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
				return redlock.New(pools, redlock.Config{Config: c})
			},
		},
	}
}

// ReplicatedName names lua_release waiting for every replica
// (Config.Replicas) in the suite and the comparison.
const ReplicatedName = "lua_release+replicas"

// Replicated returns the rows that run a technique on a primary with
// replicas, waiting for them: lua_release with one replica, every lease
// acknowledged by it (Config.Replicas 1), whose node-fault scenario must
// hold. They are apart from All, which lists each technique once.
//
// Its Lockers wait up to a quarter of the TTL for the replica (the
// default ReplicaTimeout is at most 100 ms): on a loaded machine a replica
// can take longer to acknowledge, and the suite checks safety, not speed.
func Replicated() []strategytest.Target {
	t := single(ReplicatedName, func(p strategy.Pool, c strategy.Config) (strategy.Locker, error) {
		if c.Replicas > 0 && c.ReplicaTimeout == 0 {
			ttl := c.TTL
			if ttl == 0 {
				ttl = strategy.DefaultTTL
			}
			c.ReplicaTimeout = max(ttl/4, time.Millisecond)
		}
		return luarelease.New(p, c)
	})
	t.Replicas = 1
	return []strategytest.Target{failover(t)}
}

// failover marks t to run the sentinel-failover scenario: its Locker
// follows any strategy.Pool, a sentinel.Pool included. The article
// techniques would too, but their node faults show in node-fault already,
// and lua_release is the one users run behind Sentinel.
func failover(t strategytest.Target) strategytest.Target {
	t.SentinelFailover = true
	return t
}

// single adapts a one-node constructor.
func single(name string, newLocker func(strategy.Pool, strategy.Config) (strategy.Locker, error)) strategytest.Target {
	return strategytest.Target{
		Name:  name,
		Nodes: 1,
		New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			return newLocker(pools[0], cfg)
		},
	}
}

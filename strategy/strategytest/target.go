package strategytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// Target is a technique under test.
type Target struct {
	// Name labels the results; empty means the Locker's Properties().Name.
	Name string
	// Nodes is how many independent Redis nodes the technique spans; zero
	// means 1.
	Nodes int
	// New builds the Locker over pools (len(pools) == Nodes) with cfg. The
	// suite sets cfg.TTL, cfg.Prefix, cfg.Replicas (see Replicas) and, in
	// the clock-skew scenario, cfg.Clock.
	New func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error)
	// Replicas, when above zero, gives every node the suite starts that
	// many replicas, in sync before the scenario runs, and the Lockers it
	// builds Config.Replicas = Replicas: a Locker that waits for every
	// replica (lua_release+replicas); the sentinel-failover scenario
	// gives the primary one replica more, so that one can be promoted. On
	// servers the suite did not start (Options.Addrs) neither is done: the
	// Lockers wait for none.
	Replicas int
	// SentinelFailover runs the sentinel-failover scenario on a one-node
	// target: its Lockers reach the primary through sentinel.Pools and
	// must follow it to the promoted replica. Leave it false for a Locker
	// that dials an address of its own (it would keep dialing the dead
	// primary); the scenario is then not applicable, at the cost of one
	// node's start.
	SentinelFailover bool
}

// Options shape Evaluate.
type Options struct {
	// Addrs are existing Redis servers to use instead of nodes the suite
	// starts (at least Target.Nodes of them). Scenarios that must kill,
	// freeze or replicate nodes are then NotApplicable ("skipped: needs
	// managed nodes"). Keys are namespaced per run so they do not collide
	// with other data.
	Addrs []string
	// Sentinels and Masters put the suite behind Sentinel, instead of
	// Addrs: node i is the master that the Sentinels at these addresses
	// monitor as Masters[i] (at least Target.Nodes names), reached
	// through a sentinel.Pool. As with Addrs, scenarios that must kill,
	// freeze or replicate nodes are NotApplicable and keys are namespaced.
	Sentinels []string
	Masters   []string
	// Pool is an existing connection source to run a single-node target
	// over instead of nodes (a cluster.Pool, for a Redis Cluster); Addrs
	// is then ignored. Keys are namespaced per run, and what a run writes
	// expires (locks with their TTL, fencing counters after their
	// retention). Scenarios that must kill, freeze or replicate nodes, or
	// put a proxy in front of one (faulty-network), are NotApplicable.
	Pool strategy.Pool
	// Scenarios restricts the run to these scenario names; empty means all.
	Scenarios []string
	// Progress, when set, is called after each scenario with its result.
	Progress func(Result)
}

func (t Target) nodes() int { return max(t.Nodes, 1) }

// env is what one scenario runs against: the technique and its nodes.
type env struct {
	tb     redistest.TB
	target Target
	name   string
	nodes  []*redistest.Node // nil when running on existing servers
	// replicas are each node's replicas (Target.Replicas); nil without.
	replicas [][]*redistest.Node
	addrs    []string // the nodes' addresses, managed or not
	pools    []strategy.Pool
	prefix   string
	managed  bool
	// sentinel is the Sentinel deployment of the sentinel-failover
	// scenario (nodes[0] its primary at the start); nil elsewhere.
	sentinel *redistest.Sentinel
	rec      *recorder // the scenario's Timeline
}

// newEnv gives a scenario fresh managed nodes, or pools on opts.Addrs; a
// scenario that asks for Sentinel (s.sentinel) gets a primary with
// replicas under Sentinels when the target runs it (sentinelEnv).
func newEnv(tb redistest.TB, target Target, opts Options, s scenario) (*env, error) {
	e := &env{tb: tb, target: target, prefix: "lock:", rec: newRecorder()}
	n := target.nodes()
	if opts.Pool != nil {
		if n != 1 {
			return nil, fmt.Errorf("lockzoo: strategytest: %s needs %d nodes, Options.Pool is one", target.Name, n)
		}
		e.prefix = "lockzoo-suite:" + uuid.NewString()[:8] + ":"
		e.pools = append(e.pools, e.traced(opts.Pool, ""))
	} else if len(opts.Sentinels) > 0 {
		if err := e.sentinelPools(opts, n); err != nil {
			return nil, err
		}
	} else if len(opts.Addrs) > 0 {
		if len(opts.Addrs) < n {
			return nil, fmt.Errorf("lockzoo: strategytest: %s needs %d nodes, got %d addresses", target.Name, n, len(opts.Addrs))
		}
		e.prefix = "lockzoo-suite:" + uuid.NewString()[:8] + ":"
		for _, addr := range opts.Addrs[:n] {
			e.addrs = append(e.addrs, addr)
			pool := dialPool(addr)
			tb.Cleanup(func() { pool.Close() })
			e.pools = append(e.pools, e.traced(pool, nodeName(len(e.pools), n)))
			// Registered after the pool's Close and before any Locker's,
			// it runs after the Lockers closed and before the pool goes.
			tb.Cleanup(func() {
				if err := sweep(pool, e.prefix); err != nil {
					tb.Errorf("remove the scenario's keys from %s: %v", addr, err)
				}
			})
		}
	} else if s.sentinel {
		e.managed = true
		if err := e.sentinelEnv(); err != nil {
			return nil, err
		}
	} else {
		e.managed = true
		e.nodes = redistest.Start(tb, n)
		for i, node := range e.nodes {
			e.addrs = append(e.addrs, node.Addr())
			e.pools = append(e.pools, e.traced(node.Pool(), nodeName(i, n)))
			if target.Replicas > 0 {
				var rs []*redistest.Node
				for range target.Replicas {
					rs = append(rs, node.StartReplica())
				}
				node.AwaitAcks(target.Replicas)
				e.replicas = append(e.replicas, rs)
			}
		}
	}
	l, err := e.locker(strategy.Config{})
	if err != nil {
		return nil, err
	}
	e.name = target.Name
	if e.name == "" {
		e.name = l.Properties().Name
	}
	return e, nil
}

// locker builds the target over the env's pools with the run's prefix.
func (e *env) locker(cfg strategy.Config) (strategy.Locker, error) {
	return e.lockerOn(e.pools, cfg)
}

// traced wraps pool, the node named node, so that the commands clients send
// on it are recorded.
func (e *env) traced(pool strategy.Pool, node string) strategy.Pool {
	t := tracedPool{pool: pool, rec: e.rec, node: node}
	if r, ok := pool.(redisconn.Router); ok {
		return tracedRouter{tracedPool: t, r: r} // still a cluster's, to the techniques
	}
	return t
}

// tracedRouter is a tracedPool over a Redis Cluster's pool: it passes on
// what makes the techniques route and publish on shard channels
// (redisconn.Router); subscriptions are not traced.
type tracedRouter struct {
	tracedPool
	r redisconn.Router
}

func (p tracedRouter) Subscriber(ctx context.Context) (redis.Conn, error) {
	return p.r.Subscriber(ctx)
}

func (p tracedRouter) NodeOf(key string) string { return p.r.NodeOf(key) }

// nodeName names node i of n for the timeline: "" when there is one.
func nodeName(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("node %d", i+1)
}

// lockerOn builds the target over pools with the run's prefix; a Locker
// with a Close method is closed when the scenario ends (before its nodes
// go), so its goroutines end with it. The Locker returned records its calls
// in the scenario's Timeline.
func (e *env) lockerOn(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	if e.replicas != nil && cfg.Replicas == 0 {
		cfg.Replicas = e.target.Replicas
	}
	return e.build(pools, cfg)
}

// build is lockerOn without Target.Replicas: cfg as it is (a probe on a
// promoted replica, which has no replicas of its own, waits for none).
func (e *env) build(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	cfg.Prefix = e.prefix
	l, err := e.target.New(pools, cfg)
	if err != nil {
		return nil, lockerr.New("strategytest", fmt.Errorf("build %s: %w", e.target.Name, err))
	}
	if c, ok := l.(interface{ Close() error }); ok {
		e.tb.Cleanup(func() { _ = c.Close() })
	}
	return traced(l, e.rec, cfg), nil
}

// pool returns the pool of node i as a *redis.Pool for raw commands.
func (e *env) do(ctx context.Context, i int, cmd string, args ...any) (any, error) {
	c, err := e.pools[i].GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// lockValue returns the value of the lock name on node i, under whichever
// of protocol.LockKeys the technique keeps it ("" when none exists).
func (e *env) lockValue(ctx context.Context, i int, name string) (string, error) {
	for _, key := range protocol.LockKeys(e.prefix, name) {
		v, err := redis.String(e.do(ctx, i, "GET", key))
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, redis.ErrNil) {
			return "", err
		}
	}
	return "", nil
}

// sweepBound caps the removal of a scenario's keys from a server it did
// not start.
const sweepBound = 30 * time.Second

// sweep removes every key under prefix, the scenario's own, from the server
// behind pool: what the scenario wrote (counters, resources) and what the
// technique left (fencing counters, lines). It runs when the scenario ends,
// on success, failure or interrupt, so on a fresh context.
func sweep(pool *redis.Pool, prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sweepBound)
	defer cancel()
	_, err := redistest.Sweep(ctx, pool, prefix)
	return err
}

func dialPool(addr string) *redis.Pool {
	return &redis.Pool{
		MaxIdle:     64,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(time.Second))
		},
	}
}

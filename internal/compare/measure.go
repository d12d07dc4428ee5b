package compare

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// defaultBound is -bound's default: it caps each measurement, so that a
// technique that stops handing its lock over cannot hang the run.
const defaultBound = 2 * time.Minute

// waitBound caps the wait for a Locker's background calls before its nodes
// are torn down.
const waitBound = 10 * time.Second

// nodes are the Redis servers one measurement runs on: their pools, where
// they run, and the key prefix to use there.
type nodes struct {
	pools   []strategy.Pool
	managed []*redistest.Node // the harness's nodes; nil on -addrs
	// replicas is how many replicas each managed node has, which the
	// Lockers wait for (strategytest.Target.Replicas); 0 on -addrs.
	replicas int
	backend  string
	prefix   string
}

// startNodes gives n pools: fresh nodes from the harness, each with
// replicas replicas, torn down when d's Run returns, or pools on cfg.addrs, closed then, with a prefix of the
// run's own that keeps its keys apart from other data on those servers.
func startNodes(d *redistest.Detached, cfg config, n int, replicas int) nodes {
	if len(cfg.sentinels) > 0 {
		return sentinelNodes(d, cfg, n) // a Sentinel deployment has its own replicas
	}
	if cfg.pool != nil {
		if n != 1 {
			d.Fatalf("-cluster runs single-node techniques, not one of %d nodes", n)
		}
		return nodes{pools: []strategy.Pool{cfg.pool}, backend: "cluster", prefix: "lockzoo-compare:" + uuid.NewString()[:8] + ":"}
	}
	if len(cfg.addrs) == 0 {
		var ns nodes
		for _, node := range redistest.Start(d, n) {
			ns.pools = append(ns.pools, node.Pool())
			ns.managed = append(ns.managed, node)
			ns.backend = node.Backend()
			for range replicas {
				node.StartReplica()
			}
			if replicas > 0 {
				node.AwaitAcks(replicas)
			}
		}
		ns.replicas = replicas
		ns.prefix = strategy.DefaultPrefix
		return ns
	}
	if len(cfg.addrs) < n {
		d.Fatalf("needs %d servers, -addrs gave %d", n, len(cfg.addrs))
	}
	ns := nodes{backend: "addrs", prefix: "lockzoo-compare:" + uuid.NewString()[:8] + ":"}
	for _, addr := range cfg.addrs[:n] {
		pool := &redis.Pool{
			MaxIdle:     2 * cfg.workers,
			IdleTimeout: time.Minute,
			DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(time.Second))
			},
		}
		d.Cleanup(func() { pool.Close() })
		// Runs before the pool's Close, after the Lockers were settled:
		// the fencing counters and lines they left go with the run.
		d.Cleanup(func() {
			if err := sweep(pool, ns.prefix); err != nil {
				d.Errorf("remove the run's keys from %s: %v", addr, err)
			}
		})
		ns.pools = append(ns.pools, pool)
	}
	return ns
}

// sweep removes every key under prefix, the measurement's own, from the
// server behind pool. It runs when the measurement ends, on success,
// failure or interrupt, so on a fresh context bounded by waitBound.
func sweep(pool *redis.Pool, prefix string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, err := redistest.Sweep(ctx, pool, prefix)
	return err
}

// measureRaw measures the ceiling on one node, and its cost, and returns
// the backend the node ran on.
func measureRaw(ctx context.Context, cfg config) (bench.Speed, *Cost, string, error) {
	var (
		speed   bench.Speed
		cost    *Cost
		backend string
		err     error
	)
	d := redistest.NewDetached("lockcompare-raw")
	runErr := d.Run(func() {
		ns := startNodes(d, cfg, 1, 0)
		backend = ns.backend
		ctx, cancel := context.WithTimeout(ctx, cfg.bound)
		defer cancel()
		speed, cost, err = withCost(ctx, ns.pools, func() (bench.Speed, error) {
			return bench.Raw(ctx, ns.pools[0], cfg.workers, cfg.bench)
		})
	})
	if runErr != nil {
		return speed, cost, backend, runErr
	}
	return speed, cost, backend, err
}

// measureTechnique runs the benchmarks on target over fresh nodes (or
// cfg.addrs) and records them, and their failures, in t.
func measureTechnique(ctx context.Context, cfg config, target strategytest.Target, t *Technique, progress io.Writer) {
	d := redistest.NewDetached("lockcompare-" + target.Name)
	failed := func(what string, err error) {
		t.Errors = append(t.Errors, fmt.Sprintf("%s: %v", what, err))
		fmt.Fprintf(progress, "  %-20s failed: %v\n", what, err)
	}
	runErr := d.Run(func() {
		m := &measurer{cfg: cfg, target: target, t: t, nodes: startNodes(d, cfg, t.Nodes, target.Replicas)}
		defer m.settle()
		l, err := m.build(m.nodes.pools)
		if err != nil {
			failed("build", err)
			return
		}
		props := l.Properties()
		t.Properties = &props
		for _, s := range m.steps(l) {
			if ctx.Err() != nil {
				return
			}
			sctx, cancel := context.WithTimeout(ctx, cfg.bound)
			line, err := s.run(sctx)
			cancel()
			if err != nil {
				failed(s.name, err)
				continue
			}
			fmt.Fprintf(progress, "  %-20s %s\n", s.name, line)
		}
	})
	if runErr != nil {
		failed("nodes", runErr)
	}
}

// measurer holds one technique's measurements in progress.
type measurer struct {
	cfg     config
	target  strategytest.Target
	t       *Technique
	nodes   nodes
	lockers []strategy.Locker // every Locker built, for settle
}

// step is one measurement; run records its result and returns a progress
// line.
type step struct {
	name string
	run  func(ctx context.Context) (string, error)
}

// steps lists the measurements on l, in the order they run.
func (m *measurer) steps(l strategy.Locker) []step {
	cfg, t := m.cfg, m.t
	steps := []step{
		{"uncontended", func(ctx context.Context) (string, error) {
			s, cost, err := m.uncontended(ctx, l)
			if err != nil {
				return "", err
			}
			t.Speed, t.Cost = &s, cost
			return speedText(s, cost), nil
		}},
		{"round trips", func(ctx context.Context) (string, error) {
			counting := make([]*bench.Counting, len(m.nodes.pools))
			pools := make([]strategy.Pool, len(m.nodes.pools))
			for i, p := range m.nodes.pools {
				counting[i] = bench.Count(p)
				pools[i] = counting[i]
			}
			cl, err := m.build(pools)
			if err != nil {
				return "", err
			}
			trips, err := bench.RoundTrips(ctx, cl, counting, cfg.pairs)
			if err != nil {
				return "", err
			}
			if trips.Acquire == 0 && trips.Release == 0 {
				// A Locker with clients of its own (a peer on go-redis or
				// rueidis) sends nothing through the pools it was given.
				return "not counted: the Locker does not use the pools", nil
			}
			t.Trips = &trips
			p := l.Properties()
			return fmt.Sprintf("%s (claimed %d+%d)", tripsText(trips.Acquire, trips.Release), p.AcquireRoundTrips, p.ReleaseRoundTrips), nil
		}},
		{"contended", func(ctx context.Context) (string, error) {
			c, why, err := m.contendedApart(ctx)
			t.Apart, t.ApartUnfinished = c, why
			return contendedText(c, why, err, cfg.bound)
		}},
		{"contended shared", func(ctx context.Context) (string, error) {
			c, why, err := m.contendedShared(ctx, l)
			t.Shared, t.SharedUnfinished = c, why
			return contendedText(c, why, err, cfg.bound)
		}},
	}
	for _, n := range cfg.crowds {
		steps = append(steps, m.crowdStep(n))
	}
	// Last: a node just resumed from a freeze is still working off what
	// queued up meanwhile (commands, connection attempts), which a
	// measurement after it would read too, or fail to reach it through.
	if len(m.nodes.managed) > 1 {
		steps = append(steps, step{"one node frozen", func(ctx context.Context) (string, error) {
			s, err := m.frozen(ctx, l)
			if err != nil {
				return "", err
			}
			m.t.Frozen = &s
			return speedText(s, nil), nil
		}})
	}
	return steps
}

// uncontended measures l uncontended on the measurer's nodes, and what it
// cost there.
func (m *measurer) uncontended(ctx context.Context, l strategy.Locker) (bench.Speed, *Cost, error) {
	return withCost(ctx, m.nodes.pools, func() (bench.Speed, error) {
		return bench.Uncontended(ctx, l, m.cfg.workers, m.cfg.bench)
	})
}

// speedText renders an uncontended measurement and its cost for a
// progress line.
func speedText(s bench.Speed, c *Cost) string {
	return fmt.Sprintf("%s ops/s, pair p50 %s ms, p99 %s ms%s", opsText(s.OpsPerSec), msText(s.Pair.P50), msText(s.Pair.P99), costText(c))
}

// frozen measures l uncontended while the last of its nodes is frozen
// (SIGSTOP or docker pause), each call bounded by frozenCallBound, and
// resumes the node.
func (m *measurer) frozen(ctx context.Context, l strategy.Locker) (bench.Speed, error) {
	node := m.nodes.managed[len(m.nodes.managed)-1]
	node.Pause()
	defer node.Resume()
	return bench.Uncontended(ctx, bounded{l: l, d: frozenCallBound}, m.cfg.workers, m.cfg.bench)
}

// costText renders a Cost for a progress line.
func costText(c *Cost) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(", Redis %s µs/pair, %s allocs/pair", usText(c.RedisMicrosPerPair), countText(math.Round(c.AllocsPerPair)))
}

// build makes a Locker of the technique over pools with the run's prefix.
func (m *measurer) build(pools []strategy.Pool) (strategy.Locker, error) {
	l, err := m.target.New(pools, m.config())
	if err != nil {
		return nil, err
	}
	m.lockers = append(m.lockers, l)
	return l, nil
}

// config is the Config the measurements build their Lockers with: the
// run's prefix, and Replicas when the nodes have replicas.
func (m *measurer) config() strategy.Config {
	return strategy.Config{Prefix: m.nodes.prefix, Replicas: m.nodes.replicas}
}

// settle waits, within waitBound, for the background calls of the Lockers
// that have them (redlock's answers it did not wait for), and closes the
// Lockers that have a Close, so that nothing of them is left running when
// the nodes go.
func (m *measurer) settle() {
	settle(m.lockers)
	m.lockers = nil
}

// settle is measurer.settle for the Lockers ls.
func settle(ls []strategy.Locker) {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	for _, l := range ls {
		if w, ok := l.(interface{ Wait(context.Context) error }); ok {
			_ = w.Wait(ctx)
		}
		if c, ok := l.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

func contentionText(c bench.Contention) string {
	return fmt.Sprintf("%d sections, utilisation %s, wait p50 %s ms, p99 %s ms, hand-off p50 %s ms",
		c.Sections, pctText(c.Utilisation), msText(c.Wait.P50), msText(c.Wait.P99), msText(c.Handoff.P50))
}

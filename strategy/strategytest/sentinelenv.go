package strategytest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/sentinel"
)

// sentinelTimeout bounds finding one master through the Sentinels.
const sentinelTimeout = 10 * time.Second

// sentinelPools gives the env n pools behind Sentinel: node i is the
// master opts.Masters[i] that the Sentinels at opts.Sentinels name, with a
// key prefix of the run's own, swept when the scenario ends.
func (e *env) sentinelPools(opts Options, n int) error {
	if len(opts.Masters) < n {
		return fmt.Errorf("lockzoo: strategytest: %s needs %d masters, got %d master names", e.target.Name, n, len(opts.Masters))
	}
	e.prefix = "lockzoo-suite:" + uuid.NewString()[:8] + ":"
	for _, master := range opts.Masters[:n] {
		ctx, cancel := context.WithTimeout(context.Background(), sentinelTimeout)
		pool, err := sentinel.New(ctx, master, opts.Sentinels)
		cancel()
		if err != nil {
			return err // names lockzoo, sentinel and the master
		}
		e.tb.Cleanup(func() { _ = pool.Close() })
		e.addrs = append(e.addrs, pool.Addr())
		e.pools = append(e.pools, e.traced(pool, nodeName(len(e.pools), n)))
		// Runs after the Lockers closed and before the pool goes.
		e.tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), sweepBound)
			defer cancel()
			if _, err := redistest.Sweep(ctx, pool, e.prefix); err != nil {
				e.tb.Errorf("remove the scenario's keys from master %s at %s: %v", master, pool.Addr(), err)
			}
		})
	}
	return nil
}

// failoverReplicas is how many replicas the primary of the
// sentinel-failover scenario has when the target waits for none: as many
// as a target that waits for 2 gets, so that the two differ only in the
// setting.
const failoverReplicas = 3

// sentinelEnv gives a target that runs the sentinel-failover scenario (one
// node, Target.SentinelFailover) a primary with Target.Replicas+1
// replicas (failoverReplicas when it waits for none), in sync, under 3
// Sentinels, and a sentinel.Pool on it as its pool: once one replica is
// promoted, the new primary still has the Target.Replicas its Lockers wait
// for, and the old one stays dead. Any other target gets plain nodes,
// only to build its Locker by: the scenario is not applicable.
func (e *env) sentinelEnv() error {
	t := e.target
	if !t.SentinelFailover || t.nodes() != 1 {
		e.nodes = redistest.Start(e.tb, t.nodes())
		for i, node := range e.nodes {
			e.addrs = append(e.addrs, node.Addr())
			e.pools = append(e.pools, e.traced(node.Pool(), nodeName(i, len(e.nodes))))
		}
		return nil
	}
	replicas := failoverReplicas
	if t.Replicas > 0 {
		replicas = t.Replicas + 1
	}
	s := redistest.StartSentinel(e.tb, redistest.SentinelConfig{Replicas: replicas})
	nodes := s.Nodes()
	e.sentinel, e.nodes = s, nodes[:1]
	nodes[0].AwaitAcks(replicas)
	if t.Replicas > 0 {
		e.replicas = [][]*redistest.Node{nodes[1:]}
	}
	pool, err := e.sentinelPool()
	if err != nil {
		return err
	}
	e.addrs = append(e.addrs, pool.Addr())
	e.pools = append(e.pools, e.traced(pool, ""))
	return nil
}

// sentinelPool returns a new sentinel.Pool on the env's Sentinel
// deployment, closed when the scenario ends.
func (e *env) sentinelPool() (*sentinel.Pool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sentinelTimeout)
	defer cancel()
	pool, err := sentinel.New(ctx, e.sentinel.Name(), e.sentinel.Addrs())
	if err != nil {
		return nil, err // names lockzoo, sentinel and the master
	}
	e.tb.Cleanup(func() { _ = pool.Close() })
	return pool, nil
}

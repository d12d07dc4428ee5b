package redistest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
)

// settlePoll is the pause between two looks at every node's view of the
// cluster while waiting for them to agree.
const settlePoll = 50 * time.Millisecond

// WithClusterReplicas makes StartCluster give each of the three masters a
// replica of its own (CLUSTER REPLICATE), six nodes in all, so that
// Failover and KillMaster can promote one. Start refuses it.
func WithClusterReplicas() Option {
	return func(o *options) { o.clusterReplicas = true }
}

// Replicas returns the cluster's replicas in the order of their shards
// (the replica of Masters()[i] is Replicas()[i]), or nil when the cluster
// was started without WithClusterReplicas. After KillMaster the killed
// master stands in its shard's place until Rejoin brings it back.
func (c *Cluster) Replicas() []*Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.replicas)
}

// ReplicaOf returns the replica of master, which must be one of Masters.
// It calls t.Fatalf when the cluster has no replicas or master is not one
// of its masters.
func (c *Cluster) ReplicaOf(master *Node) *Node {
	c.t.Helper()
	return c.replicas[c.shardOf(master, "ReplicaOf")]
}

// shardOf returns the index of master in masters, or calls t.Fatalf naming
// the method when it is not a master or the cluster has no replicas.
func (c *Cluster) shardOf(master *Node, method string) int {
	c.t.Helper()
	if c.replicas == nil {
		c.t.Fatalf("redistest: %s: the cluster has no replicas (StartCluster without WithClusterReplicas)", method)
	}
	i := slices.Index(c.masters, master)
	if i < 0 {
		c.t.Fatalf("redistest: %s: %s is not one of the masters %v", method, nodeAddr(master), addrs(c.masters))
	}
	return i
}

// nodes returns every node of the cluster, masters first, live or not.
func (c *Cluster) nodes() []*Node { return append(slices.Clone(c.masters), c.replicas...) }

// liveNodes returns the nodes whose server runs.
func (c *Cluster) liveNodes() []*Node {
	return slices.DeleteFunc(c.nodes(), func(n *Node) bool { return !alive(n) })
}

// alive reports whether n's server runs (it was not killed, or was
// restarted since).
func alive(n *Node) bool {
	r, ok := n.srv.(interface{ running() bool })
	return !ok || r.running()
}

// replicate makes each replica a replica of the master of its shard,
// retrying while the replica does not know the master yet (the cluster bus
// spreads CLUSTER MEET's news in a moment), for at most timeout.
func (c *Cluster) replicate(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i, r := range c.replicas {
		id := c.ids[c.masters[i]]
		for {
			_, err := r.Do("CLUSTER", "REPLICATE", id)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CLUSTER REPLICATE %s (%s) on %s: %w", id, c.masters[i].Addr(), r.Addr(), err)
			}
			time.Sleep(readyPoll)
		}
	}
	return nil
}

// waitSettled waits, for at most timeout, until every live node reports
// cluster_state:ok and a view of the cluster that matches the harness's
// record (checkView), and every live replica is in sync with its master.
func (c *Cluster) waitSettled(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range c.liveNodes() {
		for {
			err := c.checkNode(n)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the cluster did not settle within %v: %w", timeout, err)
			}
			time.Sleep(settlePoll)
		}
	}
	for i, r := range c.replicas {
		if !alive(r) {
			continue
		}
		if err := waitSynced(r.Addr(), time.Until(deadline)); err != nil {
			return fmt.Errorf("replica %s of %s: %w", r.Addr(), c.masters[i].Addr(), err)
		}
	}
	return nil
}

// checkNode returns nil when n reports cluster_state:ok and a view of the
// cluster that matches the harness's record, else an error saying what
// differs.
func (c *Cluster) checkNode(n *Node) error {
	info, err := redis.String(doTimed(probeTimeout, n.Addr(), "CLUSTER", "INFO"))
	if err != nil {
		return fmt.Errorf("CLUSTER INFO on %s: %w", n.Addr(), err)
	}
	if !clusterOK(info, len(c.nodes())) {
		return fmt.Errorf("CLUSTER INFO on %s:\n%s", n.Addr(), info)
	}
	v, err := readView(n.Addr(), true)
	if err != nil {
		return err
	}
	if err := c.checkView(v); err != nil {
		return fmt.Errorf("%s's view: %w", n.Addr(), err)
	}
	return nil
}

// checkView compares one node's view with the harness's record: each slot
// served by the master of the shard owner names, each live master a
// master, each live replica a replica of its shard's master. A view read
// from CLUSTER SLOTS is not asked about the shards that serve no slot, nor
// about replicas: it leaves out those that have no replication offset yet.
func (c *Cluster) checkView(v view) error {
	var errs []error
	served := make([]bool, len(c.masters))
	for s, i := range c.owner {
		served[i] = true
		want := c.masters[i].Addr()
		if got := v.masterOf(s); got != want {
			errs = append(errs, fmt.Errorf("slot %d served by %q, want %s", s, got, want))
			break // one slot says enough
		}
	}
	for i, m := range c.masters {
		if !v.complete && !served[i] {
			continue
		}
		if alive(m) && v.role[m.Addr()] != roleMaster {
			errs = append(errs, fmt.Errorf("%s has role %q, want %s", m.Addr(), v.role[m.Addr()], roleMaster))
		}
		if c.replicas == nil || !alive(c.replicas[i]) || !v.complete {
			continue
		}
		r := c.replicas[i]
		if got := v.replicaOf[r.Addr()]; got != m.Addr() {
			errs = append(errs, fmt.Errorf("%s is a replica of %q, want of %s", r.Addr(), got, m.Addr()))
		}
	}
	return errors.Join(errs...)
}

// nodeAddr returns n's address, or "<nil>".
func nodeAddr(n *Node) string {
	if n == nil {
		return "<nil>"
	}
	return n.Addr()
}

// addrs returns the addresses of nodes.
func addrs(nodes []*Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = nodeAddr(n)
	}
	return out
}

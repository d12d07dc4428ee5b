package redistest

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Failover settings.
const (
	// failoverTimeout bounds the wait for a failover to complete and every
	// node to agree on it. An automatic one takes about twice the
	// cluster-node-timeout and a second.
	failoverTimeout = 30 * time.Second
	// manualRetry is how long a replica gets to take over after CLUSTER
	// FAILOVER before it is sent again: a manual failover that does not
	// complete within 5 s is abandoned by the replica.
	manualRetry = 6 * time.Second
)

// Failover hands master's shard over to its replica gracefully: CLUSTER
// FAILOVER on the replica, which pauses the master's clients, waits until it
// has every write the master acknowledged, and takes over with the votes of
// the other masters; the old master becomes its replica. It returns the new
// master once it is a master, every live node sees it serving the shard's
// slots and the old master as its replica, every node reports
// cluster_state:ok and the replica is in sync. Masters, Replicas and
// NodeFor reflect the swap. It calls t.Fatalf when the cluster has no
// replicas, master is not a master or its replica is down, or the failover
// does not complete within failoverTimeout.
func (c *Cluster) Failover(master *Node) *Node {
	c.t.Helper()
	i := c.shardOf(master, "Failover")
	replica := c.replicas[i]
	if !alive(replica) || !alive(master) {
		c.t.Fatalf("redistest: Failover of %s: master and replica %s must both run (KillMaster fails over a dead master)",
			master.Addr(), replica.Addr())
	}
	deadline := time.Now().Add(failoverTimeout)
	for !isMaster(replica.Addr()) {
		if time.Now().After(deadline) {
			c.t.Fatalf("redistest: Failover of %s: replica %s not a master after %v", master.Addr(), replica.Addr(), failoverTimeout)
		}
		if _, err := replica.Do("CLUSTER", "FAILOVER"); err != nil {
			c.t.Fatalf("redistest: CLUSTER FAILOVER on %s: %v", replica.Addr(), err)
		}
		waitUntil(min(manualRetry, time.Until(deadline)), func() bool { return isMaster(replica.Addr()) })
	}
	c.swap(i)
	if err := c.waitSettled(time.Until(deadline)); err != nil {
		c.t.Fatalf("redistest: Failover of %s to %s: %v", master.Addr(), replica.Addr(), err)
	}
	return replica
}

// KillMaster kills master's server (SIGKILL, as Node.Kill) and waits until
// the cluster fails over on its own: the other masters count master as
// failed after cluster-node-timeout, its replica is elected in its place
// and the cluster reports cluster_state:ok again. It returns the new master
// once every live node sees it serving the shard's slots. Writes the
// replica had not received are lost, as in production; WAIT on the master
// before the kill rules that out. The killed node stays down in the
// replica's place (Replicas) until Rejoin. It calls t.Fatalf when the
// cluster has no replicas, master is not a live master or its replica is
// down, or the failover does not complete within failoverTimeout.
func (c *Cluster) KillMaster(master *Node) *Node {
	c.t.Helper()
	i := c.shardOf(master, "KillMaster")
	replica := c.replicas[i]
	if !alive(replica) || !alive(master) {
		c.t.Fatalf("redistest: KillMaster %s: master and replica %s must both run", master.Addr(), replica.Addr())
	}
	master.Kill()
	deadline := time.Now().Add(failoverTimeout)
	if !waitUntil(failoverTimeout, func() bool { return isMaster(replica.Addr()) }) {
		c.t.Fatalf("redistest: KillMaster %s: replica %s not promoted within %v", master.Addr(), replica.Addr(), failoverTimeout)
	}
	c.swap(i)
	if err := c.waitSettled(time.Until(deadline)); err != nil {
		c.t.Fatalf("redistest: KillMaster %s: %v", master.Addr(), err)
	}
	return replica
}

// Rejoin restarts node, a replica of the cluster killed by KillMaster or
// Node.Kill, and returns once it is back as the replica of its shard's
// master, in sync, and every node reports cluster_state:ok: it keeps its
// cluster configuration file, so it rejoins as what the cluster made it.
// Rejoining a running node does nothing. It calls t.Fatalf when node is
// not a replica of the cluster, or it does not rejoin within
// failoverTimeout.
func (c *Cluster) Rejoin(node *Node) {
	c.t.Helper()
	known := false
	for _, r := range c.replicas {
		known = known || r == node
	}
	if !known {
		c.t.Fatalf("redistest: Rejoin: %s is not one of the replicas %v", nodeAddr(node), addrs(c.replicas))
	}
	if alive(node) {
		return
	}
	node.Restart()
	if err := c.waitSettled(failoverTimeout); err != nil {
		c.t.Fatalf("redistest: Rejoin %s: %v", node.Addr(), err)
	}
}

// NodeTimeout returns the cluster's cluster-node-timeout (CONFIG GET on the
// first live node): how long a master may be unreachable before the others
// count it as failing, which bounds from below how long KillMaster's
// failover takes. It calls t.Fatalf when no node answers.
func (c *Cluster) NodeTimeout() time.Duration {
	c.t.Helper()
	var errs []error
	for _, n := range c.liveNodes() {
		reply, err := redis.Strings(n.Do("CONFIG", "GET", "cluster-node-timeout"))
		if err == nil && len(reply) == 2 {
			ms, err := strconv.Atoi(reply[1])
			if err == nil {
				return time.Duration(ms) * time.Millisecond
			}
		}
		errs = append(errs, fmt.Errorf("%s: %q, %v", n.Addr(), reply, err))
	}
	c.t.Fatalf("redistest: NodeTimeout: CONFIG GET cluster-node-timeout: %v", errors.Join(errs...))
	return 0
}

// swap makes the replica of shard i its master, and the master its replica.
func (c *Cluster) swap(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.masters[i], c.replicas[i] = c.replicas[i], c.masters[i]
}

// isMaster reports whether the node at addr says it is a master (INFO
// replication).
func isMaster(addr string) bool {
	info, err := redis.String(doTimed(probeTimeout, addr, "INFO", "replication"))
	return err == nil && redisinfo.Fields(info)["role"] == "master"
}

// waitUntil polls cond every settlePoll until it holds or timeout passes,
// and reports whether it held.
func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(settlePoll)
	}
	return true
}

// String describes the cluster's shards, for messages.
func (c *Cluster) String() string {
	return fmt.Sprintf("masters %v, replicas %v", addrs(c.masters), addrs(c.replicas))
}

package redistest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Cluster sizes and timeouts.
const (
	// clusterMasters is how many masters StartCluster starts.
	clusterMasters = 3
	// clusterSlots is the number of hash slots of a Redis Cluster.
	clusterSlots = 16384
	// clusterTimeout bounds the wait for every node to report
	// cluster_state:ok. A master waits 2 s after its start before it does.
	clusterTimeout = 20 * time.Second
	// clusterNodeTimeout is the cluster-node-timeout of a cluster with
	// replicas: how long a master may be unreachable before the others
	// count it as failing.
	clusterNodeTimeout = 2 * time.Second
)

// Cluster is a Redis Cluster of three masters, each with a replica when
// StartCluster was given WithClusterReplicas, started by StartCluster and
// torn down when the test ends. Its methods report failures with t.Fatalf
// on the TB given to StartCluster, so they must be called from the test's
// goroutine; the Nodes and pools they return may be used from any
// goroutine. Masters, Replicas, NodeForSlot, NodeFor and PoolFor only
// fail on a broken cluster, and may be read from other goroutines while
// the test's goroutine moves slots or fails a master over: they see the
// record before or after each change.
//
// The cluster is made of three shards, numbered as Masters orders them:
// shard i is the master that first served the i-th third of the slots and,
// with replicas, its replica. A failover (Failover, KillMaster) swaps the
// two nodes of a shard; resharding (MoveSlots, StartMove) moves slots
// between shards. The harness's own record of who serves what, which
// Masters, Replicas, ReplicaOf and NodeFor read, follows both; SlotMap reads
// the live cluster.
type Cluster struct {
	t TB
	// mu guards masters, replicas and owner, which the test's goroutine
	// changes (MoveSlots, Failover, KillMaster) while others may read them
	// (Masters, Replicas, NodeFor, NodeForSlot, PoolFor). The test's
	// goroutine reads them without it.
	mu sync.RWMutex
	// masters[i] is the master of shard i.
	masters []*Node
	// replicas[i] is the replica of shard i; nil without replicas. After
	// KillMaster it is the killed node until Rejoin.
	replicas []*Node
	// owner maps each slot to the index of the shard serving it.
	owner [clusterSlots]int
	// ids maps each node to its cluster node ID (CLUSTER MYID).
	ids map[*Node]string
}

// StartCluster starts a Redis Cluster: three masters with cluster-enabled
// yes, each with its own cluster configuration file, the 16384 slots split
// among them in three ranges (CLUSTER ADDSLOTSRANGE), joined with CLUSTER
// MEET. With WithClusterReplicas it also starts one replica per master
// (CLUSTER REPLICATE). It returns once every node reports cluster_state:ok
// and sees every master with its slots and every replica with its master,
// and every replica is in sync; it tears the nodes down when the test ends.
// The cluster runs on the process backend whatever LOCKZOO_REDIS_BACKEND
// says (see the package documentation). WithPersistence and WithFlags
// apply to every node. On any failure, including no redis-server on PATH,
// it calls t.Fatalf saying why.
//
// Every node runs with cluster-allow-replica-migration no, so that a
// master emptied by MoveSlots stays a master and a replica stays with its
// shard. With replicas, the nodes also run with a cluster-node-timeout of
// 2 s (clusterNodeTimeout), so that KillMaster's failover takes a few
// seconds, and cluster-replica-validity-factor 0, so that a replica always
// may take over; WithFlags("--cluster-node-timeout", "1000") overrides the
// timeout.
func StartCluster(t TB, opts ...Option) *Cluster {
	t.Helper()
	o := buildOptions(opts)
	if o.withACL {
		t.Fatalf("redistest: StartCluster does not take WithACL")
	}
	be, err := processOnly(t, "a Redis Cluster")
	if err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	count := clusterMasters
	if o.clusterReplicas {
		count *= 2
	}
	t.Logf("redistest: a cluster of %d masters and %d replicas on backend %s (%s)",
		clusterMasters, count-clusterMasters, be.name(), be.describe())
	spec := serverSpec{persist: o.persist, flags: append(clusterFlags(o.clusterReplicas), o.flags...), cluster: true}
	servers, err := launchAll(be, spec, count)
	c := &Cluster{t: t, ids: map[*Node]string{}}
	var nodes []*Node
	for _, srv := range servers {
		if srv != nil {
			nodes = append(nodes, newNode(t, be, srv, spec))
		}
	}
	if err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	c.masters = nodes[:clusterMasters]
	if o.clusterReplicas {
		c.replicas = nodes[clusterMasters:]
	}
	if err := c.form(); err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	if err := c.loadSlots(); err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	if o.clusterReplicas {
		if err := c.waitSettled(clusterTimeout); err != nil {
			t.Fatalf("redistest: StartCluster: %v", err)
		}
	}
	return c
}

// clusterFlags returns the redis-server flags of a cluster node, before
// the caller's WithFlags.
func clusterFlags(replicas bool) []string {
	flags := []string{"--cluster-allow-replica-migration", "no"}
	if replicas {
		flags = append(flags,
			"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout/time.Millisecond)),
			"--cluster-replica-validity-factor", "0")
	}
	return flags
}

// form assigns the slots, joins the nodes, makes each replica replicate
// its master and waits for cluster_state:ok, as `redis-cli --cluster
// create` does.
func (c *Cluster) form() error {
	for _, n := range c.nodes() {
		id, err := redis.String(n.Do("CLUSTER", "MYID"))
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", n.Addr(), err)
		}
		c.ids[n] = id
	}
	for i, n := range c.masters {
		first, last := i*clusterSlots/clusterMasters, (i+1)*clusterSlots/clusterMasters-1
		if _, err := n.Do("CLUSTER", "ADDSLOTSRANGE", first, last); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", first, last, n.Addr(), err)
		}
		// Distinct epochs spare the nodes resolving a collision first.
		if _, err := n.Do("CLUSTER", "SET-CONFIG-EPOCH", i+1); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH %d on %s: %w", i+1, n.Addr(), err)
		}
	}
	for _, n := range c.nodes()[1:] {
		host, port := n.srv.peer()
		bs, ok := n.srv.(interface{ clusterBus() string })
		if !ok || bs.clusterBus() == "" {
			return fmt.Errorf("%s: a %s server has no cluster bus port", n.Addr(), n.Backend())
		}
		bus := bs.clusterBus()
		if _, err := c.masters[0].Do("CLUSTER", "MEET", host, port, bus); err != nil {
			return fmt.Errorf("CLUSTER MEET %s %s %s on %s: %w", host, port, bus, c.masters[0].Addr(), err)
		}
	}
	if err := c.replicate(clusterTimeout); err != nil {
		return err
	}
	return c.waitOK(clusterTimeout)
}

// waitOK polls CLUSTER INFO on every live node until each reports
// cluster_state:ok and knows all the nodes, for at most timeout.
func (c *Cluster) waitOK(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range c.liveNodes() {
		for {
			info, err := redis.String(doTimed(probeTimeout, n.Addr(), "CLUSTER", "INFO"))
			if err == nil && clusterOK(info, len(c.nodes())) {
				break
			}
			if time.Now().After(deadline) {
				if err != nil {
					return fmt.Errorf("%s: cluster not ok after %v: %w", n.Addr(), timeout, err)
				}
				return fmt.Errorf("%s: cluster not ok after %v:\n%s", n.Addr(), timeout, info)
			}
			time.Sleep(readyPoll)
		}
	}
	return nil
}

// clusterOK reports whether a CLUSTER INFO text shows cluster_state:ok and
// at least nodes known nodes.
func clusterOK(info string, nodes int) bool {
	fields := redisinfo.Fields(info)
	known, err := strconv.Atoi(fields["cluster_known_nodes"])
	return fields["cluster_state"] == "ok" && err == nil && known >= nodes
}

// loadSlots reads CLUSTER SLOTS from the first master and records which
// master serves each slot; every slot must be served by one of them.
func (c *Cluster) loadSlots() error {
	reply, err := redis.Values(c.masters[0].Do("CLUSTER", "SLOTS"))
	if err != nil {
		return fmt.Errorf("CLUSTER SLOTS on %s: %w", c.masters[0].Addr(), err)
	}
	for i := range c.owner {
		c.owner[i] = -1
	}
	for _, r := range reply {
		first, last, addr, err := parseSlotRange(r)
		if err != nil {
			return fmt.Errorf("CLUSTER SLOTS on %s: %w", c.masters[0].Addr(), err)
		}
		idx := c.indexOf(addr)
		if idx < 0 {
			return fmt.Errorf("CLUSTER SLOTS: slots %d-%d served by %s, not one of the masters", first, last, addr)
		}
		for s := first; s <= last; s++ {
			c.owner[s] = idx
		}
	}
	for s, idx := range c.owner {
		if idx < 0 {
			return fmt.Errorf("CLUSTER SLOTS: slot %d has no master", s)
		}
	}
	return nil
}

// parseSlotRange parses one entry of CLUSTER SLOTS: first slot, last slot,
// then the master as [ip, port, id, ...], then its replicas.
func parseSlotRange(r any) (first, last int, addr string, err error) {
	entry, err := redis.Values(r, nil)
	if err != nil || len(entry) < 3 {
		return 0, 0, "", fmt.Errorf("entry %v: want [first last master ...]", r)
	}
	master, err := redis.Values(entry[2], nil)
	if err != nil || len(master) < 2 {
		return 0, 0, "", fmt.Errorf("entry %v: master %v is not [ip port ...]", r, entry[2])
	}
	first, err1 := redis.Int(entry[0], nil)
	last, err2 := redis.Int(entry[1], nil)
	ip, err3 := redis.String(master[0], nil)
	port, err4 := redis.Int(master[1], nil)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || first < 0 || last >= clusterSlots || first > last {
		return 0, 0, "", fmt.Errorf("entry %v: bad slot range or address", r)
	}
	return first, last, nodeAddrOf(ip, port), nil
}

// indexOf returns the index of the master whose address is addr, or -1.
func (c *Cluster) indexOf(addr string) int {
	for i, n := range c.masters {
		if n.Addr() == addr {
			return i
		}
	}
	return -1
}

// Masters returns the cluster's three masters, in the order of their
// shards: at the start, of the slot ranges they serve (the first serves
// slot 0). After a failover the new master takes its shard's place.
func (c *Cluster) Masters() []*Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]*Node(nil), c.masters...)
}

// Slot returns the hash slot of key, as CLUSTER KEYSLOT on the first master
// that answers says: the slot of the key's {tag} when it has one.
func (c *Cluster) Slot(key string) int {
	c.t.Helper()
	var errs []error
	for _, n := range c.masters {
		slot, err := redis.Int(n.Do("CLUSTER", "KEYSLOT", key))
		if err == nil && slot >= 0 && slot < clusterSlots {
			return slot
		}
		errs = append(errs, fmt.Errorf("%s: %d, %v", n.Addr(), slot, err))
	}
	c.t.Fatalf("redistest: CLUSTER KEYSLOT %q: %v", key, errors.Join(errs...))
	return -1
}

// NodeFor returns the master that serves key's slot (CLUSTER KEYSLOT, then
// the slot map CLUSTER SLOTS gave at the start, as MoveSlots, Failover and
// KillMaster changed it since).
func (c *Cluster) NodeFor(key string) *Node {
	c.t.Helper()
	return c.NodeForSlot(c.Slot(key))
}

// PoolFor returns the pool of the master that serves key's slot.
func (c *Cluster) PoolFor(key string) *redis.Pool {
	c.t.Helper()
	return c.NodeFor(key).Pool()
}

package redistest

import (
	"errors"
	"fmt"
	"strconv"
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
)

// Cluster is a Redis Cluster of three masters and no replicas, started by
// StartCluster and torn down when the test ends. Its methods report
// failures with t.Fatalf on the TB given to StartCluster, so they must be
// called from the test's goroutine; the Nodes and pools they return may be
// used from any goroutine.
type Cluster struct {
	t       TB
	masters []*Node
	// owner maps each slot to the index in masters of the node serving it.
	owner [clusterSlots]int
}

// StartCluster starts a Redis Cluster: three masters with cluster-enabled
// yes, each with its own cluster configuration file, the 16384 slots split
// among them in three ranges (CLUSTER ADDSLOTSRANGE), joined with CLUSTER
// MEET. It returns once every node reports cluster_state:ok, and tears the
// nodes down when the test ends. The cluster runs on the process backend
// whatever LOCKZOO_REDIS_BACKEND says (see the package documentation).
// WithPersistence applies to every master. On any failure, including no
// redis-server on PATH, it calls t.Fatalf saying why.
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
	t.Logf("redistest: a cluster of %d masters on backend %s (%s)", clusterMasters, be.name(), be.describe())
	spec := serverSpec{persist: o.persist, flags: o.flags, cluster: true}
	servers, err := launchAll(be, spec, clusterMasters)
	c := &Cluster{t: t}
	for _, srv := range servers {
		if srv != nil {
			c.masters = append(c.masters, newNode(t, be, srv, spec))
		}
	}
	if err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	if err := c.form(); err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	if err := c.loadSlots(); err != nil {
		t.Fatalf("redistest: StartCluster: %v", err)
	}
	return c
}

// form assigns the slots, joins the masters and waits for cluster_state:ok,
// as `redis-cli --cluster create` does.
func (c *Cluster) form() error {
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
	for _, n := range c.masters[1:] {
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
	return c.waitOK(clusterTimeout)
}

// waitOK polls CLUSTER INFO on every node until each reports
// cluster_state:ok and knows all the masters, for at most timeout.
func (c *Cluster) waitOK(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range c.masters {
		for {
			info, err := redis.String(doTimed(probeTimeout, n.Addr(), "CLUSTER", "INFO"))
			if err == nil && clusterOK(info, clusterMasters) {
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
	return first, last, ip + ":" + strconv.Itoa(port), nil
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

// Masters returns the cluster's three masters, in the order of the slot
// ranges they serve (the first serves slot 0).
func (c *Cluster) Masters() []*Node { return append([]*Node(nil), c.masters...) }

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
// the slot map CLUSTER SLOTS gave at the start).
func (c *Cluster) NodeFor(key string) *Node {
	c.t.Helper()
	return c.masters[c.owner[c.Slot(key)]]
}

// PoolFor returns the pool of the master that serves key's slot.
func (c *Cluster) PoolFor(key string) *redis.Pool {
	c.t.Helper()
	return c.NodeFor(key).Pool()
}

package redistest

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Roles of a node, as CLUSTER SHARDS names them.
const (
	roleMaster  = "master"
	roleReplica = "replica"
)

// SlotRange is a range of hash slots, First to Last inclusive, and the
// master that serves them.
type SlotRange struct {
	First, Last int
	Master      *Node
}

// SlotMap reads from the live cluster which master serves each slot:
// CLUSTER SHARDS, or CLUSTER SLOTS where the server does not know CLUSTER
// SHARDS, on the first live node that answers, masters first. It returns
// the ranges in slot order, adjacent ranges of one master merged; a slot
// no master serves is in no range. It calls t.Fatalf when no node answers,
// or when a range is served by a node that is not one of the cluster's.
// During a move or a failover the nodes may briefly disagree; MoveSlots,
// Failover and KillMaster return once they agree.
func (c *Cluster) SlotMap() []SlotRange {
	c.t.Helper()
	var errs []error
	for _, n := range c.liveNodes() {
		v, err := readView(n.Addr(), true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out, err := c.slotRanges(v)
		if err != nil {
			c.t.Fatalf("redistest: SlotMap: %s's view: %v", n.Addr(), err)
		}
		return out
	}
	c.t.Fatalf("redistest: SlotMap: no node answers: %v", errors.Join(errs...))
	return nil
}

// slotRanges turns a view's ranges into SlotRanges of the cluster's nodes.
func (c *Cluster) slotRanges(v view) ([]SlotRange, error) {
	var out []SlotRange
	for _, r := range v.ranges {
		n := c.nodeAt(r.master)
		if n == nil {
			return nil, fmt.Errorf("slots %d-%d served by %s, not a node of the cluster", r.first, r.last, r.master)
		}
		if k := len(out) - 1; k >= 0 && out[k].Master == n && out[k].Last+1 == r.first {
			out[k].Last = r.last
			continue
		}
		out = append(out, SlotRange{First: r.first, Last: r.last, Master: n})
	}
	return out, nil
}

// NodeForSlot returns the master that serves slot in the harness's record:
// the slot map read at the start, as MoveSlots, Failover and KillMaster
// changed it since. It calls t.Fatalf when slot is not in [0, 16384).
func (c *Cluster) NodeForSlot(slot int) *Node {
	c.t.Helper()
	if slot < 0 || slot >= clusterSlots {
		c.t.Fatalf("redistest: NodeForSlot(%d): want a slot in [0, %d)", slot, clusterSlots)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.masters[c.owner[slot]]
}

// nodeAt returns the node of the cluster whose address is addr, or nil.
func (c *Cluster) nodeAt(addr string) *Node {
	for _, n := range c.nodes() {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// view is what one node believes about the cluster.
type view struct {
	// ranges are the served slot ranges in slot order.
	ranges []viewRange
	// role maps a node's address to roleMaster or roleReplica.
	role map[string]string
	// replicaOf maps a replica's address to its master's.
	replicaOf map[string]string
	// complete is false for a view read from CLUSTER SLOTS, which leaves
	// out the masters that serve no slot, and replicas that are failed or
	// have no replication offset yet.
	complete bool
}

// viewRange is a range of slots and the address of the master serving it.
type viewRange struct {
	first, last int
	master      string
}

// masterOf returns the address of the master serving slot in v, or "".
func (v view) masterOf(slot int) string {
	i, found := slices.BinarySearchFunc(v.ranges, slot, func(r viewRange, s int) int {
		switch {
		case r.last < s:
			return -1
		case r.first > s:
			return 1
		}
		return 0
	})
	if !found {
		return ""
	}
	return v.ranges[i].master
}

// readView reads addr's view of the cluster: with CLUSTER SHARDS when
// shards is set and the server knows it, else with CLUSTER SLOTS.
func readView(addr string, shards bool) (view, error) {
	if shards {
		reply, err := doTimed(doTimeout, addr, "CLUSTER", "SHARDS")
		if err == nil {
			v, err := parseShards(reply)
			if err != nil {
				return view{}, fmt.Errorf("CLUSTER SHARDS on %s: %w", addr, err)
			}
			return v, nil
		}
		if !strings.Contains(strings.ToLower(err.Error()), "unknown subcommand") {
			return view{}, fmt.Errorf("CLUSTER SHARDS on %s: %w", addr, err)
		}
	}
	reply, err := redis.Values(doTimed(doTimeout, addr, "CLUSTER", "SLOTS"))
	if err != nil {
		return view{}, fmt.Errorf("CLUSTER SLOTS on %s: %w", addr, err)
	}
	v, err := parseSlots(reply)
	if err != nil {
		return view{}, fmt.Errorf("CLUSTER SLOTS on %s: %w", addr, err)
	}
	return v, nil
}

// parseShards parses a CLUSTER SHARDS reply (RESP2): one entry per shard,
// "slots" (pairs of first and last slot) and "nodes" (each with "ip",
// "port", "role" and "health").
func parseShards(reply any) (view, error) {
	shards, err := redis.Values(reply, nil)
	if err != nil {
		return view{}, fmt.Errorf("want an array of shards: %w", err)
	}
	v := view{role: map[string]string{}, replicaOf: map[string]string{}, complete: true}
	for _, sh := range shards {
		fields, err := fieldMap(sh)
		if err != nil {
			return view{}, fmt.Errorf("shard %v: %w", sh, err)
		}
		slots, err := redis.Ints(fields["slots"], nil)
		if err != nil || len(slots)%2 != 0 {
			return view{}, fmt.Errorf("shard %v: slots are not pairs of numbers", sh)
		}
		nodes, err := redis.Values(fields["nodes"], nil)
		if err != nil {
			return view{}, fmt.Errorf("shard %v: no nodes: %w", sh, err)
		}
		var master string
		var replicas []string
		for _, node := range nodes {
			addr, role, health, err := parseShardNode(node)
			if err != nil {
				return view{}, fmt.Errorf("shard %v: %w", sh, err)
			}
			v.role[addr] = role
			switch {
			case role == roleReplica:
				replicas = append(replicas, addr)
			case master == "" || health == "online":
				master = addr // a failed old master may share the shard
			}
		}
		for _, r := range replicas {
			v.replicaOf[r] = master
		}
		for i := 0; i < len(slots); i += 2 {
			if master == "" {
				return view{}, fmt.Errorf("shard %v serves slots but has no master", sh)
			}
			v.ranges = append(v.ranges, viewRange{first: slots[i], last: slots[i+1], master: master})
		}
	}
	return sortRanges(v)
}

// parseShardNode parses one node of a CLUSTER SHARDS shard.
func parseShardNode(node any) (addr, role, health string, err error) {
	f, err := fieldMap(node)
	if err != nil {
		return "", "", "", fmt.Errorf("node %v: %w", node, err)
	}
	ip, err1 := redis.String(f["ip"], nil)
	port, err2 := redis.Int(f["port"], nil)
	role, err3 := redis.String(f["role"], nil)
	health, _ = redis.String(f["health"], nil)
	if err1 != nil || err2 != nil || err3 != nil {
		return "", "", "", fmt.Errorf("node %v: want ip, port and role", node)
	}
	if ip == "" {
		ip, _ = redis.String(f["endpoint"], nil)
	}
	return nodeAddrOf(ip, port), role, health, nil
}

// nodeAddrOf returns the address of the node at ip and port. A node that
// nobody has told its address yet shows none for itself; the harness's
// nodes all listen on 127.0.0.1.
func nodeAddrOf(ip string, port int) string {
	if ip == "" || ip == "?" {
		ip = "127.0.0.1"
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

// parseSlots parses a CLUSTER SLOTS reply: per range, first and last slot,
// the master as [ip, port, id, ...], then its replicas alike.
func parseSlots(reply []any) (view, error) {
	v := view{role: map[string]string{}, replicaOf: map[string]string{}}
	for _, r := range reply {
		first, last, master, err := parseSlotRange(r)
		if err != nil {
			return view{}, err
		}
		v.ranges = append(v.ranges, viewRange{first: first, last: last, master: master})
		v.role[master] = roleMaster
		entry, _ := redis.Values(r, nil) // parseSlotRange checked it
		for _, rep := range entry[3:] {
			node, err := redis.Values(rep, nil)
			if err != nil || len(node) < 2 {
				return view{}, fmt.Errorf("entry %v: replica %v is not [ip port ...]", r, rep)
			}
			ip, err1 := redis.String(node[0], nil)
			port, err2 := redis.Int(node[1], nil)
			if err1 != nil || err2 != nil {
				return view{}, fmt.Errorf("entry %v: replica %v is not [ip port ...]", r, rep)
			}
			addr := nodeAddrOf(ip, port)
			v.role[addr] = roleReplica
			v.replicaOf[addr] = master
		}
	}
	return sortRanges(v)
}

// sortRanges sorts v's ranges by first slot and checks that they are
// valid and do not overlap.
func sortRanges(v view) (view, error) {
	slices.SortFunc(v.ranges, func(a, b viewRange) int { return a.first - b.first })
	for i, r := range v.ranges {
		if r.first < 0 || r.last >= clusterSlots || r.first > r.last {
			return view{}, fmt.Errorf("bad slot range %d-%d", r.first, r.last)
		}
		if i > 0 && v.ranges[i-1].last >= r.first {
			return view{}, fmt.Errorf("slot ranges %d-%d and %d-%d overlap",
				v.ranges[i-1].first, v.ranges[i-1].last, r.first, r.last)
		}
	}
	return v, nil
}

// fieldMap turns a RESP2 array of alternating names and values (a RESP3
// map sent to a RESP2 client) into a map.
func fieldMap(reply any) (map[string]any, error) {
	flat, err := redis.Values(reply, nil)
	if err != nil || len(flat)%2 != 0 {
		return nil, fmt.Errorf("want an array of names and values")
	}
	m := make(map[string]any, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, err := redis.String(flat[i], nil)
		if err != nil {
			return nil, fmt.Errorf("field name %v is not a string", flat[i])
		}
		m[k] = flat[i+1]
	}
	return m, nil
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// slotMap is one node's view of the cluster: the master of each slot
// range, and every node it knows.
type slotMap struct {
	ranges []slotRange
	nodes  []string // every node's address, masters and replicas
}

type slotRange struct {
	first, last int
	master      string
}

// apply makes m the Pool's map. Slots m does not cover have no master.
func (p *Pool) apply(m slotMap) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var owner [Slots]*node
	for _, r := range m.ranges {
		n := p.nodeLocked(r.master)
		for s := r.first; s <= r.last; s++ {
			owner[s] = n
		}
	}
	p.owner = owner
	for _, a := range m.nodes {
		p.nodeLocked(a)
	}
}

// ask reads the slot map from n: CLUSTER SHARDS, or CLUSTER SLOTS on a
// server without it (before Redis 7).
func ask(ctx context.Context, n *node) (slotMap, error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	c, err := n.pool.GetContext(ctx)
	if err != nil {
		return slotMap{}, err
	}
	defer c.Close()
	host, _, _ := net.SplitHostPort(n.addr)
	reply, err := redis.DoContext(c, ctx, "CLUSTER", "SHARDS")
	if e, ok := err.(redis.Error); ok && !strings.Contains(strings.ToLower(string(e)), "cluster support disabled") {
		reply, err = redis.DoContext(c, ctx, "CLUSTER", "SLOTS")
		if err != nil {
			return slotMap{}, notCluster(err)
		}
		return parseSlots(reply, host)
	}
	if err != nil {
		return slotMap{}, notCluster(err)
	}
	return parseShards(reply, host)
}

// notCluster wraps ErrNotCluster around a node's refusal of CLUSTER
// commands (cluster support disabled), and returns other errors as they
// are.
func notCluster(err error) error {
	if e, ok := err.(redis.Error); ok && strings.Contains(strings.ToLower(string(e)), "cluster support disabled") {
		return fmt.Errorf("%w: %w", ErrNotCluster, err)
	}
	return err
}

// parseShards reads a CLUSTER SHARDS reply: per shard, "slots" (pairs of
// first and last slot) and "nodes" (each a map with "ip", "endpoint",
// "port" or "tls-port", "role"). host replaces an empty or unknown
// address (the node asked).
func parseShards(reply any, host string) (slotMap, error) {
	shards, err := redis.Values(reply, nil)
	if err != nil {
		return slotMap{}, fmt.Errorf("CLUSTER SHARDS: %w", err)
	}
	var m slotMap
	for _, sh := range shards {
		fields, err := fieldMap(sh)
		if err != nil {
			return slotMap{}, fmt.Errorf("CLUSTER SHARDS: shard: %w", err)
		}
		slots, _ := redis.Ints(fields["slots"], nil)
		nodes, _ := redis.Values(fields["nodes"], nil)
		master := ""
		for _, nd := range nodes {
			nf, err := fieldMap(nd)
			if err != nil {
				return slotMap{}, fmt.Errorf("CLUSTER SHARDS: node: %w", err)
			}
			addr := shardAddr(nf, host)
			if addr == "" {
				continue
			}
			m.nodes = append(m.nodes, addr)
			role, _ := redis.String(nf["role"], nil)
			health, _ := redis.String(nf["health"], nil)
			if role == "master" && (master == "" || health == "online") {
				master = addr
			}
		}
		if len(slots)%2 != 0 {
			return slotMap{}, fmt.Errorf("CLUSTER SHARDS: odd slot list %v", slots)
		}
		for i := 0; i+1 < len(slots); i += 2 {
			if master == "" {
				break // a shard without a master serves nothing
			}
			if err := checkRange(slots[i], slots[i+1]); err != nil {
				return slotMap{}, fmt.Errorf("CLUSTER SHARDS: %w", err)
			}
			m.ranges = append(m.ranges, slotRange{slots[i], slots[i+1], master})
		}
	}
	return m, nil
}

// shardAddr is a CLUSTER SHARDS node's address: its endpoint (else its
// ip, else host) and its port (else its tls-port); "" without a port.
func shardAddr(f map[string]any, host string) string {
	h, _ := redis.String(f["endpoint"], nil)
	if h == "" || h == "?" {
		h, _ = redis.String(f["ip"], nil)
	}
	if h == "" || h == "?" {
		h = host
	}
	port, err := redis.Int(f["port"], nil)
	if err != nil || port == 0 {
		if port, err = redis.Int(f["tls-port"], nil); err != nil || port == 0 {
			return ""
		}
	}
	return net.JoinHostPort(h, strconv.Itoa(port))
}

// fieldMap reads a flat list of names and values.
func fieldMap(v any) (map[string]any, error) {
	kv, err := redis.Values(v, nil)
	if err != nil || len(kv)%2 != 0 {
		return nil, fmt.Errorf("%v is not a list of names and values", v)
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, err := redis.String(kv[i], nil)
		if err != nil {
			return nil, fmt.Errorf("field name %v: %w", kv[i], err)
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// parseSlots reads a CLUSTER SLOTS reply: per range, first and last slot,
// then the master as [ip, port, ...], then its replicas.
func parseSlots(reply any, host string) (slotMap, error) {
	entries, err := redis.Values(reply, nil)
	if err != nil {
		return slotMap{}, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	var m slotMap
	for _, e := range entries {
		vals, err := redis.Values(e, nil)
		if err != nil || len(vals) < 3 {
			return slotMap{}, fmt.Errorf("CLUSTER SLOTS: entry %v: want [first last master ...]", e)
		}
		first, err1 := redis.Int(vals[0], nil)
		last, err2 := redis.Int(vals[1], nil)
		if err := errors.Join(err1, err2); err != nil {
			return slotMap{}, fmt.Errorf("CLUSTER SLOTS: entry %v: %w", e, err)
		}
		if err := checkRange(first, last); err != nil {
			return slotMap{}, fmt.Errorf("CLUSTER SLOTS: %w", err)
		}
		for i, nv := range vals[2:] {
			nd, err := redis.Values(nv, nil)
			if err != nil || len(nd) < 2 {
				return slotMap{}, fmt.Errorf("CLUSTER SLOTS: node %v: want [ip port ...]", nv)
			}
			ip, _ := redis.String(nd[0], nil)
			port, err := redis.Int(nd[1], nil)
			if err != nil {
				return slotMap{}, fmt.Errorf("CLUSTER SLOTS: node %v: port: %w", nv, err)
			}
			if ip == "" || ip == "?" {
				ip = host
			}
			addr := net.JoinHostPort(ip, strconv.Itoa(port))
			m.nodes = append(m.nodes, addr)
			if i == 0 {
				m.ranges = append(m.ranges, slotRange{first, last, addr})
			}
		}
	}
	return m, nil
}

// checkRange rejects a slot range outside [0, Slots).
func checkRange(first, last int) error {
	if first < 0 || last >= Slots || first > last {
		return fmt.Errorf("bad slot range %d-%d", first, last)
	}
	return nil
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Refresh bounds.
const (
	// refreshEvery is the least time between two refreshes the refresher
	// makes: a burst of MOVED replies or failures costs one.
	refreshEvery = 50 * time.Millisecond
	// askTimeout bounds asking one node for the map.
	askTimeout = time.Second
	// refreshTimeout bounds one refresh of the refresher.
	refreshTimeout = 5 * time.Second
)

// topology runs a Pool's refresher: one goroutine, started by New and
// ended by Close, that reads the slot map again when asked (after a
// MOVED, a failed node, an unserved slot), at most once per refreshEvery.
type topology struct {
	requests chan struct{} // one pending request at most
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine ends
	once     sync.Once
	// refreshing serialises refreshes: the refresher's and those a
	// caller makes itself (refreshNow).
	refreshing sync.Mutex
	last       time.Time // when the last refresh ended; guarded by refreshing
}

// start launches the refresher of p.
func (t *topology) start(p *Pool) {
	t.requests = make(chan struct{}, 1)
	t.done = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.run(ctx, p)
}

// request asks the refresher for a refresh; it never blocks.
func (t *topology) request() {
	if t.requests == nil {
		return // New has not started it yet: its own refresh is under way
	}
	select {
	case t.requests <- struct{}{}:
	default:
	}
}

// stop ends the refresher and waits for it.
func (t *topology) stop() {
	t.once.Do(func() {
		if t.cancel != nil {
			t.cancel()
			<-t.done
		}
	})
}

// run serves refresh requests until ctx is cancelled (Close).
func (t *topology) run(ctx context.Context, p *Pool) {
	defer close(t.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.requests:
		}
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = p.refresh(rctx) // a failure leaves the map as it was; the next failure asks again
		cancel()
		wait := time.NewTimer(refreshEvery)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}

// refreshNow refreshes the map unless a refresh ended within
// refreshEvery, bounded by ctx: for a caller that cannot go on without
// the new map (a shard subscription whose slot moved).
func (p *Pool) refreshNow(ctx context.Context) error {
	p.topo.refreshing.Lock()
	recent := time.Since(p.topo.last) < refreshEvery
	p.topo.refreshing.Unlock()
	if recent {
		return nil
	}
	return p.refresh(ctx)
}

// refresh reads the slot map from the first node that gives one: the
// masters, then the seeds, then the other nodes met, each bounded by
// askTimeout and all by ctx. It returns an error naming each node's
// failure, wrapping ErrNotCluster, when none gave one.
func (p *Pool) refresh(ctx context.Context) error {
	p.topo.refreshing.Lock()
	defer p.topo.refreshing.Unlock()
	defer func() { p.topo.last = time.Now() }()
	var errs []error
	for _, n := range p.candidates() {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		m, err := ask(ctx, n)
		if err == nil {
			p.apply(m)
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.addr, err))
	}
	return fmt.Errorf("%w: no node gave a slot map: %w", ErrNotCluster, errors.Join(errs...))
}

// candidates returns the nodes to ask for the map, in order: the masters
// of the current map, the seeds, the others.
func (p *Pool) candidates() []*node {
	p.mu.RLock()
	defer p.mu.RUnlock()
	seen := map[*node]bool{}
	var out []*node
	add := func(n *node) {
		if n != nil && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range p.owner {
		add(n)
	}
	for _, s := range p.seeds {
		add(p.nodes[s])
	}
	for _, n := range p.order {
		add(n)
	}
	return out
}

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

package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// errName is the name the Pool's errors carry after "lockzoo: " (lockerr).
const errName = "cluster"

// Defaults of a Pool.
const (
	// DefaultMaxIdle is how many idle connections a Pool keeps per node.
	DefaultMaxIdle = 16
	// idleTimeout closes a node's connections idle for longer.
	idleTimeout = time.Minute
	// connectTimeout bounds the default dial's connect.
	connectTimeout = 2 * time.Second
)

// Pool is a Redis Cluster connection source: it keeps the cluster's slot
// map and one connection pool per node, and hands out connections that
// send each command to the master of its key's slot. Pass it wherever a
// strategy.Pool goes. It is safe for concurrent use.
type Pool struct {
	dial    func(ctx context.Context, addr string) (redis.Conn, error)
	maxIdle int
	seeds   []string

	mu     sync.RWMutex
	owner  [Slots]*node     // the master of each slot; nil: none known
	nodes  map[string]*node // every node met: masters, replicas, seeds
	order  []*node          // nodes in the order met, for refresh
	closed bool

	topo topology // the refresher: requests and its goroutine
}

// node is one Redis server of the cluster and its connections.
type node struct {
	addr string
	pool *redis.Pool
}

// Option configures a Pool.
type Option func(*Pool)

// WithDial makes the Pool connect to a node at addr ("host:port") with
// dial, which must return a connection ready for commands: authenticated
// (AUTH, or HELLO with credentials), over TLS if the cluster uses it. The
// default is redis.DialContext over TCP with a 2 s connect timeout.
func WithDial(dial func(ctx context.Context, addr string) (redis.Conn, error)) Option {
	return func(p *Pool) { p.dial = dial }
}

// WithMaxIdle keeps at most n idle connections per node (DefaultMaxIdle
// by default).
func WithMaxIdle(n int) Option {
	return func(p *Pool) { p.maxIdle = n }
}

// New connects to the cluster through the first of seeds (addresses
// "host:port" of any of its nodes) that answers, reads the slot map
// (CLUSTER SHARDS, or CLUSTER SLOTS where the server has no SHARDS), and
// returns the Pool, bounded by ctx. It returns an error wrapping
// strategy.ErrInvalidConfig for no seeds or an empty one, and one wrapping
// ErrNotCluster, with each seed's failure, when no seed gave a slot map.
// Close the Pool when done.
func New(ctx context.Context, seeds []string, opts ...Option) (*Pool, error) {
	if len(seeds) == 0 {
		return nil, lockerr.New(errName, fmt.Errorf("%w: no seeds", strategy.ErrInvalidConfig))
	}
	for i, s := range seeds {
		if s == "" {
			return nil, lockerr.New(errName, fmt.Errorf("%w: seed %d is empty", strategy.ErrInvalidConfig, i))
		}
	}
	p := &Pool{maxIdle: DefaultMaxIdle, seeds: append([]string(nil), seeds...), nodes: map[string]*node{}}
	p.dial = func(ctx context.Context, addr string) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(connectTimeout))
	}
	for _, o := range opts {
		o(p)
	}
	if p.dial == nil {
		return nil, lockerr.New(errName, fmt.Errorf("%w: nil dial function", strategy.ErrInvalidConfig))
	}
	if p.maxIdle < 0 {
		return nil, lockerr.New(errName, fmt.Errorf("%w: negative MaxIdle %d", strategy.ErrInvalidConfig, p.maxIdle))
	}
	p.mu.Lock()
	for _, s := range p.seeds {
		p.nodeLocked(s)
	}
	p.mu.Unlock()
	if err := p.refresh(ctx); err != nil {
		p.closeNodes()
		return nil, lockerr.New(errName, err)
	}
	p.topo.start(p)
	return p, nil
}

// GetContext returns a connection that routes each command by its key
// (see the package documentation). It does no I/O: the connections to
// the nodes are taken when the first command needs them. It returns an
// error wrapping strategy.ErrClosed after Close, and ctx's error when ctx
// has ended.
func (p *Pool) GetContext(ctx context.Context) (redis.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.isClosed() {
		return nil, lockerr.New(errName, strategy.ErrClosed)
	}
	return &conn{p: p}, nil
}

// Get is GetContext without a bound, for code that takes a *redis.Pool's
// Get: on failure it returns a connection whose every call returns the
// error, as redis.Pool's Get does.
func (p *Pool) Get() redis.Conn {
	c, err := p.GetContext(context.Background())
	if err != nil {
		return errorConn{err}
	}
	return c
}

// Subscriber returns a connection for shard channels (SSUBSCRIBE,
// SUNSUBSCRIBE): each channel is subscribed on the master of its slot,
// over one connection per master, and the messages of all come out of
// Receive. When a slot moves, the server ends its channels' subscriptions
// (sunsubscribe): the connection subscribes them again on the slot's new
// master and passes the sunsubscribe on. A master's connection that
// fails is dialled again, its channels reported as sunsubscribed
// meanwhile; the other masters' go on. Release notices of lockzoo's Lockers over a
// Pool use it (internal/notify).
func (p *Pool) Subscriber(ctx context.Context) (redis.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.isClosed() {
		return nil, lockerr.New(errName, strategy.ErrClosed)
	}
	return newSubConn(p), nil
}

var _ redisconn.Sharded = (*Pool)(nil)

// Close stops the Pool's refresher and closes its idle connections;
// connections in use are closed when they are returned. Later GetContext
// calls return an error wrapping strategy.ErrClosed. It returns nil; a
// second Close does nothing.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.topo.stop()
	p.closeNodes()
	return nil
}

// closeNodes closes every node's pool.
func (p *Pool) closeNodes() {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, n := range p.order {
		n.pool.Close()
	}
}

func (p *Pool) isClosed() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.closed
}

// Masters returns the addresses of the masters that serve slots in the
// current slot map, in slot order.
func (p *Pool) Masters() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var addrs []string
	seen := map[*node]bool{}
	for _, n := range p.owner {
		if n != nil && !seen[n] {
			seen[n] = true
			addrs = append(addrs, n.addr)
		}
	}
	return addrs
}

// MasterOf returns the address of the master that serves key's slot in
// the current slot map, or an error wrapping ErrSlotUnserved.
func (p *Pool) MasterOf(key string) (string, error) {
	n, err := p.master(Slot(key))
	if err != nil {
		return "", err
	}
	return n.addr, nil
}

// NodeOf returns the address of the master that serves key's slot in
// the current slot map, or "" when none does: a redisconn.Pipeline keeps
// one stream per master by it (redisconn.Router).
func (p *Pool) NodeOf(key string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if n := p.owner[Slot(key)]; n != nil {
		return n.addr
	}
	return ""
}

var _ redisconn.Router = (*Pool)(nil)

// master returns the node serving slot, or an error wrapping
// ErrSlotUnserved (and asks for a refresh of the map).
func (p *Pool) master(slot int) (*node, error) {
	p.mu.RLock()
	n, closed := p.owner[slot], p.closed
	p.mu.RUnlock()
	switch {
	case closed:
		return nil, lockerr.New(errName, strategy.ErrClosed)
	case n == nil:
		p.topo.request()
		return nil, fmt.Errorf("slot %d: %w", slot, ErrSlotUnserved)
	}
	return n, nil
}

// anyNode returns a node for a command that has no key: the master of
// slot 0, else the first node met.
func (p *Pool) anyNode() *node {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if n := p.owner[0]; n != nil {
		return n
	}
	return p.order[0]
}

// nodeAt returns the node at addr, met now if new.
func (p *Pool) nodeAt(addr string) *node {
	p.mu.RLock()
	n := p.nodes[addr]
	p.mu.RUnlock()
	if n != nil {
		return n
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nodeLocked(addr)
}

// nodeLocked is nodeAt with p.mu held for writing.
func (p *Pool) nodeLocked(addr string) *node {
	if n := p.nodes[addr]; n != nil {
		return n
	}
	n := &node{addr: addr}
	n.pool = &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) { return p.dial(ctx, addr) },
		MaxIdle:     p.maxIdle,
		IdleTimeout: idleTimeout,
	}
	if p.closed {
		n.pool.Close()
	}
	p.nodes[addr] = n
	p.order = append(p.order, n)
	return n
}

// moved records that slot is served by the master at addr (a MOVED
// reply) and asks for a refresh of the whole map, since a slot rarely
// moves alone.
func (p *Pool) moved(slot int, addr string) {
	p.mu.Lock()
	p.owner[slot] = p.nodeLocked(addr)
	p.mu.Unlock()
	p.topo.request()
}

// errorConn is a connection whose every call fails with err.
type errorConn struct{ err error }

func (c errorConn) Close() error                   { return nil }
func (c errorConn) Err() error                     { return c.err }
func (c errorConn) Do(string, ...any) (any, error) { return nil, c.err }
func (c errorConn) Send(string, ...any) error      { return c.err }
func (c errorConn) Flush() error                   { return c.err }
func (c errorConn) Receive() (any, error)          { return nil, c.err }

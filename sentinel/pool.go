package sentinel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// name is the name errors carry after "lockzoo: ".
const name = "sentinel"

// minAskInterval is the least time between two questions to the Sentinels
// that failed connections ask (a dead master fails every dial until the
// Sentinels promote a replica); +switch-master is not delayed by it.
const minAskInterval = 100 * time.Millisecond

// maxGetTries bounds how often GetContext moves to another master before
// it gives up with the last error.
const maxGetTries = 3

// Pool hands out connections to the master that Sentinels name, and
// follows it across failovers. It is a strategy.Pool, so it goes wherever
// a *redis.Pool does. Create one with New, and Close it when done. It is
// safe for concurrent use.
type Pool struct {
	master string
	opts   options

	// cur is the master connections are handed out for; nil after Close.
	cur atomic.Pointer[target]
	// ask serializes questions to the Sentinels (a semaphore that a
	// waiting caller's ctx can end); lastAsk is guarded by it.
	ask     chan struct{}
	lastAsk time.Time

	// stop ends the listener; done is closed when it has ended.
	stop context.CancelFunc
	done chan struct{}

	// mu guards the fields below and the moves of cur.
	mu sync.Mutex
	// sentinels, the one that answered last first.
	sentinels []string
	closed    bool
	// listening is the listener's connection to a Sentinel, closed by
	// Close so that a read it waits on ends at once; nil when none.
	listening redis.Conn
}

// target is one master address and the connections to it.
type target struct {
	addr string
	pool *redis.Pool
	// suspect: a connection to it met READONLY, so it may have become a
	// replica; the next GetContext asks the Sentinels before lending one.
	suspect atomic.Bool
}

// Compile-time check that a Pool goes where a strategy.Pool does.
var _ strategy.Pool = (*Pool)(nil)

// New returns a Pool for the master the Sentinels at sentinels
// ("host:port" each) monitor as masterName. It asks them in turn
// (SENTINEL GET-MASTER-ADDR-BY-NAME) until one names the master, connects
// to it and checks that it answers ROLE as a master, all bounded by ctx
// (and WithTimeout for each step), and starts the Pool's listener, a
// goroutine that follows +switch-master on one Sentinel until Close.
//
// On failure nothing is left running and the error wraps
// strategy.ErrInvalidConfig (an empty masterName or sentinel address, no
// sentinels, a bad option), ErrUnknownMaster (the Sentinels that answered
// do not know masterName), ErrNoSentinel (none answered), ErrNotMaster
// (the master named answers ROLE as a replica), or says why the master
// could not be reached.
func New(ctx context.Context, masterName string, sentinels []string, opts ...Option) (*Pool, error) {
	if err := checkArgs(masterName, sentinels); err != nil {
		return nil, lockerr.New(name, err)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	p := &Pool{
		master:    masterName,
		opts:      o,
		ask:       make(chan struct{}, 1),
		sentinels: append([]string(nil), sentinels...),
		done:      make(chan struct{}),
	}
	addr, err := p.askSentinels(ctx)
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	p.lastAsk = time.Now()
	t := p.newTarget(addr)
	c, err := t.pool.GetContext(ctx)
	if err != nil {
		if c != nil {
			c.Close()
		}
		t.pool.Close()
		return nil, lockerr.New(name, err)
	}
	c.Close() // into the pool: the first caller needs no dial
	p.cur.Store(t)
	lctx, stop := context.WithCancel(context.Background())
	p.stop = stop
	go p.listen(lctx)
	return p, nil
}

// checkArgs returns an error wrapping strategy.ErrInvalidConfig for an
// empty master name or sentinel address, or no sentinels.
func checkArgs(masterName string, sentinels []string) error {
	switch {
	case masterName == "":
		return fmt.Errorf("%w: empty master name", strategy.ErrInvalidConfig)
	case strings.ContainsAny(masterName, " \t\r\n"):
		return fmt.Errorf("%w: master name %q holds white space", strategy.ErrInvalidConfig, masterName)
	case len(sentinels) == 0:
		return fmt.Errorf("%w: no sentinel addresses", strategy.ErrInvalidConfig)
	}
	for i, s := range sentinels {
		if s == "" {
			return fmt.Errorf("%w: sentinel address %d is empty", strategy.ErrInvalidConfig, i)
		}
	}
	return nil
}

// GetContext returns a connection to the current master, bounded by ctx.
// A new connection is checked with ROLE; one that finds a replica is
// refused, and GetContext asks the Sentinels again and moves to the
// master they name, as it does when the master cannot be reached or a
// connection lent earlier met READONLY. Close the connection to give it
// back.
//
// It fails with an error wrapping strategy.ErrClosed after Close,
// ErrNotMaster when the Sentinels keep naming a node that is not a
// master, ErrUnknownMaster or ErrNoSentinel when asking them again failed
// so, ctx's error when ctx ended, or the error of the connection to the
// master (a dead master fails so until the Sentinels promote a replica).
func (p *Pool) GetContext(ctx context.Context) (redis.Conn, error) {
	for tries := 1; ; tries++ {
		t := p.cur.Load()
		if t == nil {
			return nil, errClosed()
		}
		if t.suspect.Load() && tries <= maxGetTries {
			if _, err := p.refresh(ctx, t); err != nil {
				return nil, lockerr.New(name, err)
			}
			continue
		}
		c, err := t.pool.GetContext(ctx)
		if err == nil {
			return &conn{Conn: c, t: t}, nil
		}
		if c != nil {
			c.Close() // redigo lends an error connection with the error
		}
		if p.cur.Load() != t {
			continue // moved meanwhile; t's pool was closed under us
		}
		if tries >= maxGetTries || ctx.Err() != nil {
			return nil, lockerr.New(name, err)
		}
		moved, rerr := p.refresh(ctx, t)
		if rerr != nil {
			return nil, lockerr.New(name, fmt.Errorf("%w (asking the sentinels again: %w)", err, rerr))
		}
		if !moved {
			return nil, lockerr.New(name, err)
		}
	}
}

// errClosed is the error of a call after Close.
func errClosed() error {
	return lockerr.New(name, fmt.Errorf("pool closed: %w", strategy.ErrClosed))
}

// refresh asks the Sentinels for the master, unless another caller did so
// less than minAskInterval ago, and moves the Pool to the master they
// name when it is not seen's address; a suspect seen is replaced by a
// fresh target even at the same address, dropping its idle connections.
// It reports whether cur is no longer seen (moved here or meanwhile).
func (p *Pool) refresh(ctx context.Context, seen *target) (moved bool, err error) {
	select {
	case p.ask <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-p.ask }()
	switch cur := p.cur.Load(); {
	case cur == nil:
		return false, fmt.Errorf("pool closed: %w", strategy.ErrClosed)
	case cur != seen:
		return true, nil
	}
	addr := seen.addr
	if time.Since(p.lastAsk) >= minAskInterval {
		var err error
		addr, err = p.askSentinels(ctx)
		if ctx.Err() == nil { // a caller out of time leaves the asking to others
			p.lastAsk = time.Now()
		}
		if err != nil && !seen.suspect.Load() {
			return false, err
		}
		if err != nil {
			// Drop the suspect connections all the same: new ones check ROLE.
			addr = seen.addr
		}
	}
	if addr == seen.addr && !seen.suspect.Load() {
		return false, nil
	}
	return p.moveTo(seen, addr), nil
}

// moveTo makes a new target at addr current in place of from, unless
// another move or Close came first, and closes from's pool: its idle
// connections now, the lent ones when given back. It reports whether cur
// is no longer from.
func (p *Pool) moveTo(from *target, addr string) bool {
	p.mu.Lock()
	if p.closed || p.cur.Load() != from {
		p.mu.Unlock()
		return !p.closed
	}
	p.cur.Store(p.newTarget(addr))
	p.mu.Unlock()
	from.pool.Close() // redigo's Close returns nil
	if p.opts.onSwitch != nil && addr != from.addr {
		p.opts.onSwitch(from.addr, addr)
	}
	return true
}

// newTarget returns a target whose pool dials addr and checks ROLE.
func (p *Pool) newTarget(addr string) *target {
	return &target{addr: addr, pool: &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) { return p.dialMaster(ctx, addr) },
		MaxIdle:     p.opts.maxIdle,
		MaxActive:   p.opts.maxActive,
		Wait:        p.opts.maxActive > 0,
		IdleTimeout: p.opts.idleTimeout,
	}}
}

// dialMaster connects to addr and returns the connection when the node
// answers ROLE as a master; otherwise it closes it and returns an error,
// wrapping ErrNotMaster when the node is something else.
func (p *Pool) dialMaster(ctx context.Context, addr string) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.timeout)
	defer cancel()
	c, err := redis.DialContext(ctx, "tcp", addr, p.opts.nodeDial...)
	if err != nil {
		return nil, fmt.Errorf("master %q at %s: %w", p.master, addr, err)
	}
	role, err := roleOf(ctx, c)
	if err == nil && role != "master" {
		err = fmt.Errorf("%w: the sentinels name %s as master %q, which answers ROLE as %s", ErrNotMaster, addr, p.master, role)
	} else if err != nil {
		err = fmt.Errorf("master %q at %s: ROLE: %w", p.master, addr, err)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// roleOf returns the first element of c's ROLE reply: "master", "slave"
// or "sentinel".
func roleOf(ctx context.Context, c redis.Conn) (string, error) {
	reply, err := redis.Values(redis.DoContext(c, ctx, "ROLE"))
	if err != nil {
		return "", err
	}
	if len(reply) == 0 {
		return "", errors.New("empty ROLE reply")
	}
	return redis.String(reply[0], nil)
}

// Addr returns the address of the master the Pool lends connections to
// now, as the Sentinels name it; "" after Close.
func (p *Pool) Addr() string {
	if t := p.cur.Load(); t != nil {
		return t.addr
	}
	return ""
}

// Close stops the listener, waits for it to end, and closes the idle
// connections; each lent connection is closed when given back. Later
// GetContext calls fail with an error wrapping strategy.ErrClosed. Close
// returns nil, also when called again.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	t := p.cur.Swap(nil)
	p.stop()
	if p.listening != nil {
		p.listening.Close() // ends the listener's read at once
	}
	p.mu.Unlock()
	<-p.done
	return t.pool.Close()
}

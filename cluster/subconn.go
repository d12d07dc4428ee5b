package cluster

import (
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// placeRetry is how often a subscriber tries again to subscribe a
// channel whose slot had no master, or whose master could not be reached.
const placeRetry = 100 * time.Millisecond

// subConn is a Pool's connection for shard channels (Subscriber): one
// connection per master, dialled for it (never pooled, since a
// subscribed connection cannot serve commands), each read by a goroutine
// of its own that ends when Close closes the connections. Send and Flush
// take SSUBSCRIBE and SUNSUBSCRIBE; the connections to new masters are
// dialled by Receive, on the caller's goroutine and within its bound, so
// that Send never waits for a dial.
type subConn struct {
	p      *Pool
	events chan subEvent
	kick   chan struct{} // a channel waits to be placed on a new link
	stop   chan struct{} // closed by Close
	wg     sync.WaitGroup

	mu     sync.Mutex
	links  map[*node]*subLink
	want   map[string]bool     // channels subscribed by the caller
	placed map[string]*subLink // where each wanted channel is subscribed
	stale  bool                // a slot moved: refresh the map before placing
	gaps   []string            // channels whose master's connection failed, to report
	// quietUntil: a dial failed; no new link is dialled (or kicked for)
	// before it, so that a master that refuses connections is tried once
	// per placeRetry, not in a loop.
	quietUntil time.Time
	err        error
	closed     bool
}

// subLink is a subscriber's connection to one master.
type subLink struct {
	n     *node
	c     redis.Conn
	dirty bool
}

// subEvent is what a link's reader read: a reply, or its failure.
type subEvent struct {
	l   *subLink
	v   any
	err error
}

func newSubConn(p *Pool) *subConn {
	return &subConn{p: p, events: make(chan subEvent), kick: make(chan struct{}, 1), stop: make(chan struct{}),
		links: map[*node]*subLink{}, want: map[string]bool{}, placed: map[string]*subLink{}}
}

// Send takes SSUBSCRIBE and SUNSUBSCRIBE of shard channels.
func (c *subConn) Send(cmd string, args ...any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return errConnClosed
	}
	switch upper(cmd) {
	case "SSUBSCRIBE":
		for _, a := range args {
			c.want[argString(a)] = true
		}
		c.place()
	case "SUNSUBSCRIBE":
		names := args
		if len(names) == 0 {
			for ch := range c.want {
				names = append(names, ch)
			}
		}
		for _, a := range names {
			ch := argString(a)
			delete(c.want, ch)
			if l := c.placed[ch]; l != nil {
				delete(c.placed, ch)
				if err := l.c.Send("SUNSUBSCRIBE", ch); err != nil {
					return c.fail(err)
				}
				l.dirty = true
			}
		}
	default:
		return fmt.Errorf("lockzoo: cluster: %s on a shard subscriber: only SSUBSCRIBE and SUNSUBSCRIBE", cmd)
	}
	return nil
}

// place subscribes each wanted channel not subscribed yet on the link to
// its slot's master, where there is one; a channel whose master has no
// link yet waits for Receive to dial it (kick). c.mu is held.
func (c *subConn) place() {
	for ch := range c.want {
		if c.placed[ch] != nil {
			continue
		}
		n, err := c.p.master(Slot(ch))
		if err != nil {
			continue // placeRetry
		}
		l := c.links[n]
		if l == nil {
			if time.Now().After(c.quietUntil) {
				select {
				case c.kick <- struct{}{}:
				default:
				}
			}
			continue
		}
		if err := l.c.Send("SSUBSCRIBE", ch); err != nil {
			c.fail(err)
			return
		}
		l.dirty = true
		c.placed[ch] = l
	}
}

// unplaced reports whether a wanted channel is not subscribed. c.mu is held.
func (c *subConn) unplaced() bool { return len(c.placed) < len(c.want) }

func (c *subConn) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	c.p.topo.request()
	return c.err
}

// Flush writes the queued subscriptions.
func (c *subConn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flush()
}

// flush is conn.flush over the subscriber's links, a map of subLinks
// rather than a slice of links: the loop is written for each type.
func (c *subConn) flush() error {
	if c.err != nil {
		return c.err
	}
	for _, l := range c.links {
		if l.dirty {
			l.dirty = false
			if err := l.c.Flush(); err != nil {
				return c.fail(fmt.Errorf("flush to %s: %w", l.n.addr, err))
			}
		}
	}
	return nil
}

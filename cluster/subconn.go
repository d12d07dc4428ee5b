package cluster

import (
	"context"
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
	err    error
	closed bool
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
			select {
			case c.kick <- struct{}{}:
			default:
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

// Receive returns the next message or (un)subscription confirmation of
// any master, as redigo's PubSubConn reads them ([]any{kind, channel,
// ...}), after dialling the masters that channels wait for.
func (c *subConn) Receive() (any, error) { return c.receive(context.Background()) }

// ReceiveWithTimeout is Receive bounded by timeout (none when 0).
func (c *subConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	if timeout <= 0 {
		return c.Receive()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.receive(ctx)
}

// ReceiveContext is Receive bounded by ctx.
func (c *subConn) ReceiveContext(ctx context.Context) (any, error) { return c.receive(ctx) }

func (c *subConn) receive(ctx context.Context) (any, error) {
	for {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		unplaced := c.unplaced()
		c.mu.Unlock()
		if v, err, pass := c.next(ctx, unplaced); pass {
			return v, err
		}
	}
}

// next waits for one event, a kick, or placeRetry when a channel is not
// placed; pass reports whether Receive returns v and err.
func (c *subConn) next(ctx context.Context, unplaced bool) (v any, err error, pass bool) {
	var retry <-chan time.Time
	if unplaced {
		t := time.NewTimer(placeRetry)
		defer t.Stop()
		retry = t.C
	}
	select {
	case ev := <-c.events:
		return c.handle(ev)
	case <-c.kick:
	case <-retry:
	case <-ctx.Done():
		return nil, ctx.Err(), true
	case <-c.stop:
		return nil, errConnClosed, true
	}
	return nil, nil, false
}

// connect refreshes the map after a slot moved, dials the masters that
// wanted channels need and subscribes them there.
func (c *subConn) connect(ctx context.Context) error {
	c.mu.Lock()
	if c.err != nil {
		defer c.mu.Unlock()
		return c.err
	}
	if c.closed {
		c.mu.Unlock()
		return errConnClosed
	}
	stale := c.stale
	c.stale = false
	var need []*node
	seen := map[*node]bool{}
	for ch := range c.want {
		if c.placed[ch] != nil {
			continue
		}
		if n, err := c.p.master(Slot(ch)); err == nil && c.links[n] == nil && !seen[n] {
			seen[n] = true
			need = append(need, n)
		}
	}
	c.mu.Unlock()
	if stale {
		_ = c.p.refreshNow(ctx) // a stale map places the channel on the old master, which MOVEs it
	}
	for _, n := range need {
		rc, err := c.p.dial(ctx, n.addr)
		if err != nil {
			c.p.topo.request()
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.fail(fmt.Errorf("subscribe on %s: %w", n.addr, err))
		}
		c.mu.Lock()
		if c.closed || c.links[n] != nil {
			c.mu.Unlock()
			rc.Close()
			continue
		}
		l := &subLink{n: n, c: rc}
		c.links[n] = l
		c.wg.Add(1)
		go c.read(l)
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.place()
	return c.flush()
}

// read reads l until its connection fails or is closed, and hands each
// reply to Receive; it ends then, or when Close is called.
func (c *subConn) read(l *subLink) {
	defer c.wg.Done()
	for {
		v, err := l.c.Receive()
		if e, refused := err.(redis.Error); refused {
			v, err = e, nil
		}
		select {
		case c.events <- subEvent{l: l, v: v, err: err}:
		case <-c.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// handle reads one event; pass reports whether Receive returns it. A
// sunsubscribe of a channel still wanted came from the server (its slot
// moved): the channel is placed again after a refresh of the map, and the
// sunsubscribe passed on (a notice may have been lost). A MOVED reply to
// an SSUBSCRIBE places the slot's channels again on the master it names.
func (c *subConn) handle(ev subEvent) (v any, err error, pass bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.err != nil {
		return nil, c.fail(fmt.Errorf("read from %s: %w", ev.l.n.addr, ev.err)), true
	}
	if e, refused := ev.v.(redis.Error); refused {
		rd, ok := parseRedirection(e)
		rd = rd.withHost(ev.l.n.addr)
		if !ok || rd.kind != "MOVED" && rd.kind != "ASK" {
			return nil, c.fail(fmt.Errorf("%s: %w", ev.l.n.addr, e)), true
		}
		if rd.kind == "MOVED" {
			c.p.moved(rd.slot, rd.addr)
		}
		for ch, l := range c.placed {
			if l == ev.l && Slot(ch) == rd.slot {
				delete(c.placed, ch)
			}
		}
		c.stale = rd.kind == "ASK"
		return nil, nil, false
	}
	vals, _ := ev.v.([]any)
	if len(vals) >= 2 {
		kind, _ := redis.String(vals[0], nil)
		ch, _ := redis.String(vals[1], nil)
		if kind == "sunsubscribe" && c.want[ch] && c.placed[ch] == ev.l {
			delete(c.placed, ch)
			c.stale = true
		}
	}
	return ev.v, nil, true
}

// Do is not supported on a subscriber, except Do("") which flushes.
func (c *subConn) Do(cmd string, args ...any) (any, error) {
	if cmd == "" {
		return nil, c.Flush()
	}
	return nil, fmt.Errorf("lockzoo: cluster: Do(%q) on a shard subscriber", cmd)
}

// Err returns the error that failed c, or nil.
func (c *subConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes every link and waits for their readers to end.
func (c *subConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.stop)
	links := c.links
	c.links = map[*node]*subLink{}
	c.mu.Unlock()
	for _, l := range links {
		l.c.Close()
	}
	c.wg.Wait()
	return nil
}

// DoContext is Do; ctx is not needed to flush.
func (c *subConn) DoContext(_ context.Context, cmd string, args ...any) (any, error) {
	return c.Do(cmd, args...)
}

// DoWithTimeout is Do; no timeout is needed to flush.
func (c *subConn) DoWithTimeout(_ time.Duration, cmd string, args ...any) (any, error) {
	return c.Do(cmd, args...)
}

var (
	_ redis.ConnWithContext = (*subConn)(nil)
	_ redis.ConnWithTimeout = (*subConn)(nil)
	_ redis.ConnWithContext = (*conn)(nil)
	_ redis.ConnWithTimeout = (*conn)(nil)
)

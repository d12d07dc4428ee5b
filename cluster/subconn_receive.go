package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

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
		if n := len(c.gaps); n > 0 {
			// A channel whose master's connection failed: as the
			// server's own sunsubscribe, so that its listeners look for
			// themselves (a notice may have been lost).
			ch := c.gaps[n-1]
			c.gaps = c.gaps[:n-1]
			c.mu.Unlock()
			return []any{[]byte("sunsubscribe"), []byte(ch), int64(0)}, nil
		}
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
	quiet := time.Now().Before(c.quietUntil)
	var need []*node
	seen := map[*node]bool{}
	for ch := range c.want {
		if c.placed[ch] != nil {
			continue
		}
		if n, err := c.p.master(Slot(ch)); err == nil && c.links[n] == nil && !seen[n] && !quiet {
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
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The master may be gone: its channels wait (placeRetry)
			// for the map to name another.
			c.mu.Lock()
			c.stale = true
			c.quietUntil = time.Now().Add(placeRetry)
			c.mu.Unlock()
			c.p.topo.failed(n.addr)
			continue
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
		// One master's connection failed: its channels wait to be placed
		// again (on the master the refreshed map names), and their
		// listeners hear of the gap; the other masters' go on.
		if c.links[ev.l.n] == ev.l {
			delete(c.links, ev.l.n)
		}
		ev.l.c.Close()
		for ch, l := range c.placed {
			if l == ev.l {
				delete(c.placed, ch)
				c.gaps = append(c.gaps, ch)
			}
		}
		c.stale = true
		c.p.topo.request()
		return nil, nil, false
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

package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// Receive reads the reply of the oldest command awaiting one.
func (c *conn) Receive() (any, error) { return c.receive(bound{}, false) }

// ReceiveWithTimeout is Receive bounded by timeout (none when 0).
func (c *conn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return c.receive(deadlineBound(timeout), false)
}

// ReceiveContext is Receive bounded by ctx.
func (c *conn) ReceiveContext(ctx context.Context) (any, error) {
	return c.receive(bound{ctx: ctx}, false)
}

func deadlineBound(timeout time.Duration) bound {
	if timeout <= 0 {
		return bound{}
	}
	return bound{deadline: time.Now().Add(timeout)}
}

// receive reads the oldest command's reply and follows a redirection
// (settle); own: redo a redirected command on c's own connection to the
// new node (see redo). An error reply is returned as its redis.Error, a
// cluster failure (CLUSTERDOWN, no master) as an error wrapping this
// package's sentinel; any other error fails c.
func (c *conn) receive(b bound, own bool) (any, error) {
	c.mu.Lock()
	for len(c.fifo) == 0 && c.err == nil && !c.closed {
		// As a connection's read waits for a reply to come, wait for a
		// command to be sent, within b.
		if c.sent == nil {
			c.sent = make(chan struct{}, 1)
		}
		c.mu.Unlock()
		if err := c.awaitSend(b); err != nil {
			return nil, err
		}
		c.mu.Lock()
	}
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	if c.closed {
		c.mu.Unlock()
		return nil, errConnClosed
	}
	s := c.fifo[0]
	c.fifo[0] = nil
	c.fifo = c.fifo[1:]
	c.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	r, err := c.read(s, b)
	if s.hidden && (err == nil || isReply(err)) {
		return c.receive(b, own) // the caller's reply is next
	}
	if err != nil && !isReply(err) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.fail(err)
	}
	return c.settle(s, r, err, b, own)
}

// awaitSend waits for a command to be sent on c, within b. c.sent is
// made (under c.mu) before it is called, and never changes after.
func (c *conn) awaitSend(b bound) error {
	var done <-chan struct{}
	if b.ctx != nil {
		done = b.ctx.Done()
	}
	var expired <-chan time.Time
	if !b.deadline.IsZero() {
		t := time.NewTimer(time.Until(b.deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-c.sent:
		return nil
	case <-done:
		return b.ctx.Err()
	case <-expired:
		return fmt.Errorf("%w: no command was sent", context.DeadlineExceeded)
	}
}

// read reads s's reply from its link (and from each of also, for an
// ECHO: the first reply that differs from the others is returned, so a
// mark that any node answered out of place fails as out of place).
func (c *conn) read(s *sent, b bound) (any, error) {
	r, err := c.readLink(s.l, b)
	for _, l := range s.also {
		r2, err2 := c.readLink(l, b)
		if err == nil && err2 != nil {
			return nil, err2
		}
		if err == nil && !sameReply(r, r2) {
			r, err = r2, err2
		}
	}
	return r, err
}

// readLink reads one reply from l, bounded by b.
func (c *conn) readLink(l *link, b bound) (any, error) {
	r, err := recv(l.c, b)
	c.mu.Lock()
	l.pending--
	c.mu.Unlock()
	if err != nil && !isReply(err) {
		return nil, fmt.Errorf("read from %s: %w", l.n.addr, err)
	}
	return r, err
}

// recv reads one reply from rc, bounded by b as far as rc allows.
func recv(rc redis.Conn, b bound) (any, error) {
	if b.ctx != nil {
		if _, ok := rc.(redis.ConnWithContext); ok {
			return redis.ReceiveContext(rc, b.ctx)
		}
		if dl, ok := b.ctx.Deadline(); ok {
			b.deadline = dl
		}
	}
	if !b.deadline.IsZero() {
		if _, ok := rc.(redis.ConnWithTimeout); ok {
			return redis.ReceiveWithTimeout(rc, max(time.Until(b.deadline), time.Nanosecond))
		}
	}
	return rc.Receive()
}

// sameReply reports whether two ECHO replies are the same.
func sameReply(a, b any) bool {
	x, errA := redis.String(a, nil)
	y, errB := redis.String(b, nil)
	return errA == nil && errB == nil && x == y
}

// isReply reports whether err is the server's error reply or a cluster
// refusal of one command (a redisconn.Refusal wrapping one of this
// package's sentinels), after which the connection is still in step.
func isReply(err error) bool {
	if _, ok := err.(redis.Error); ok {
		return true
	}
	return redisconn.IsRefusal(err)
}

// Do sends cmd (none when "") and reads every reply awaited, as redigo's
// Do: it returns the last reply and the first error reply; with cmd ""
// the replies as a slice, error replies and refusals
// (redisconn.Refusal) in it.
func (c *conn) Do(cmd string, args ...any) (any, error) { return c.do(bound{}, cmd, args) }

// DoWithTimeout is Do bounded by timeout (none when 0).
func (c *conn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	return c.do(deadlineBound(timeout), cmd, args)
}

// DoContext is Do bounded by ctx.
func (c *conn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.do(bound{ctx: ctx}, cmd, args)
}

func (c *conn) do(b bound, cmd string, args []any) (any, error) {
	ctx, cancel := b.context()
	defer cancel()
	c.mu.Lock()
	// A command alone on c is redone on c's own connection to the node
	// a redirection names, so that a WATCH and the transaction after it
	// meet on one connection.
	alone := cmd != "" && len(c.fifo) == 0
	if cmd != "" {
		if err := c.send(ctx, cmd, args); err != nil {
			c.mu.Unlock()
			return nil, err
		}
	}
	if err := c.flush(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	n := 0
	for _, s := range c.fifo {
		if !s.hidden {
			n++
		}
	}
	c.mu.Unlock()
	var replies []any
	if cmd == "" {
		replies = make([]any, 0, n)
	}
	var first error
	var reply any
	for i := range n {
		r, err := c.receive(b, alone && i == n-1)
		if err != nil && !isReply(err) {
			return nil, err
		}
		if cmd == "" && err != nil {
			r, err = err, nil // an error reply or a refusal: in the slice, as redigo's
		}
		if err != nil && first == nil {
			first = err
		}
		reply = r
		if cmd == "" {
			replies = append(replies, r)
		}
	}
	if cmd == "" {
		return replies, nil
	}
	return reply, first
}

// Err returns the error that failed c, or nil.
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close returns c's connections to their nodes' pools. A connection with
// replies unread is read dry first, within drainTimeout, so that it goes
// back in step or not at all.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	links := c.links
	c.links = nil
	c.signal()
	c.mu.Unlock()
	for _, l := range links {
		if l.pending > 0 {
			_, _ = redis.DoWithTimeout(l.c, drainTimeout, "")
		}
		l.c.Close()
	}
	return nil
}

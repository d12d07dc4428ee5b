package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// drainTimeout bounds reading the replies a failed connection left
// unread on a node's connection before it goes back to its pool.
const drainTimeout = time.Second

// conn is a connection of a Pool (GetContext): one connection per node
// it sends to, taken from the node's pool when first needed. Each keyed
// command goes to the master of its key's slot; a command without a key
// to the node of the last keyed one (MULTI, EXEC and UNWATCH follow
// WATCH), every command of a transaction to the node of its MULTI, and an
// ECHO (a Pipeline's mark, redisconn) to every node written since the
// last ECHO, so that it proves each node's replies in place. Replies come
// back in the order the commands were sent, whatever nodes they went to.
// A MOVED or ASK reply is followed: the command is sent again to the
// node named (after ASKING for ASK) and its reply given in place of the
// redirection; see redo. As redigo's, one goroutine may send (Send,
// Flush) while another receives.
type conn struct {
	p *Pool

	mu       sync.Mutex
	links    []*link // one per node sent to; a handful at most
	last     *link   // the node of the last keyed command
	lastSlot int     // its slot
	fifo     []*sent
	touched  []*link // links written since the last ECHO
	tx       *link   // between MULTI and its EXEC or DISCARD: where every command goes
	txSlot   int     // the slot of the keyed command before MULTI (WATCH's)
	txMoved  bool    // a command queued in the transaction was redirected
	// asked is the link a command alone on c was last ASKed to, for the
	// slot askedSlot: a transaction there starts with ASKING, which holds
	// for the whole of it (Redis keeps the flag until EXEC).
	asked     *link
	askedSlot int
	err       error // a failed connection: every later call returns it
	closed    bool
	// sent is signalled when a command joins fifo, for a Receive that
	// came first (a Pipeline's reader starts before its writer writes).
	sent chan struct{}
}

// link is a conn's connection to one node.
type link struct {
	n       *node
	c       redis.Conn
	dirty   bool // written since its last Flush
	pending int  // replies not read yet
}

// sent is one command awaiting its reply.
type sent struct {
	l    *link
	also []*link // an ECHO sent to these links too
	name string
	args []any
	inTx bool // queued in a transaction: not redone, the EXEC aborts
	// hidden: c's own (an ASKING in front of a MULTI); its reply is read
	// and dropped.
	hidden bool
	exec   bool  // the EXEC of a transaction
	err    error // not sent (no master for its slot): this is its reply
}

// bound is what bounds a read: ctx, else a deadline, else nothing but the
// connection's own timeouts.
type bound struct {
	ctx      context.Context
	deadline time.Time
}

// context returns a context that ends when b does, and its cancel.
func (b bound) context() (context.Context, context.CancelFunc) {
	switch {
	case b.ctx != nil:
		return b.ctx, func() {}
	case !b.deadline.IsZero():
		return context.WithDeadline(context.Background(), b.deadline)
	}
	return context.Background(), func() {}
}

var errConnClosed = errors.New("lockzoo: cluster: connection closed")

// Send queues cmd for the node its key routes to.
func (c *conn) Send(cmd string, args ...any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(context.Background(), cmd, args)
}

// send is Send with c.mu held; ctx bounds taking a node's connection.
func (c *conn) send(ctx context.Context, cmd string, args []any) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return errConnClosed
	}
	name := upper(cmd)
	switch name {
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE":
		// Pub/sub replies come unasked, which this connection's replies
		// in order cannot carry.
		return fmt.Errorf("lockzoo: cluster: %s on a command connection: subscribe through Pool.Subscriber", name)
	}
	s := &sent{name: name, args: args}
	var l *link
	switch {
	case c.tx != nil:
		l = c.tx
		switch name {
		case "EXEC", "DISCARD":
			c.tx, s.exec = nil, name == "EXEC"
		case "PUBLISH":
			// A shard channel must share the transaction's slot.
			if len(args) > 0 && Slot(argString(args[0])) == c.txSlot {
				s.name = "SPUBLISH"
			}
			s.inTx = true
		default:
			s.inTx = true
		}
	default:
		if name == "PUBLISH" {
			s.name = "SPUBLISH" // notices go on shard channels
		}
		var err error
		if key, keyed := keyOf(s.name, args); keyed {
			slot := Slot(key)
			n, err := c.p.master(slot)
			if err != nil {
				s.err = fmt.Errorf("%s %q: %w", s.name, key, err)
				c.fifo = append(c.fifo, s)
				c.signal()
				return nil
			}
			if l, err = c.link(ctx, n); err != nil {
				return err
			}
			c.last, c.lastSlot = l, slot
		} else if name == "ECHO" && len(c.touched) > 0 {
			l, s.also = c.touched[0], append([]*link(nil), c.touched[1:]...)
		} else if l = c.last; l == nil {
			if l, err = c.link(ctx, c.p.anyNode()); err != nil {
				return err
			}
			c.last, c.lastSlot = l, -1
		}
		if name == "MULTI" {
			c.tx, c.txSlot, c.txMoved = l, c.lastSlot, false
			if c.asked == l && c.askedSlot == c.lastSlot {
				if err := l.c.Send("ASKING"); err != nil {
					return c.fail(fmt.Errorf("ASKING on %s: %w", l.n.addr, err))
				}
				l.pending++
				c.fifo = append(c.fifo, &sent{l: l, name: "ASKING", hidden: true})
			}
		}
	}
	if err := c.write(l, s.name, args); err != nil {
		return err
	}
	for _, to := range s.also {
		if err := c.write(to, s.name, args); err != nil {
			return err
		}
	}
	s.l = l
	if name == "ECHO" {
		c.touched = c.touched[:0]
	} else if !has(c.touched, l) {
		c.touched = append(c.touched, l)
	}
	c.fifo = append(c.fifo, s)
	c.signal()
	return nil
}

// write sends one command on l. c.mu is held.
func (c *conn) write(l *link, name string, args []any) error {
	if err := l.c.Send(name, args...); err != nil {
		return c.fail(fmt.Errorf("%s on %s: %w", name, l.n.addr, err))
	}
	l.dirty = true
	l.pending++
	return nil
}

// signal wakes a Receive that waits for a command. c.mu is held.
func (c *conn) signal() {
	if c.sent == nil {
		return // no Receive has waited yet
	}
	select {
	case c.sent <- struct{}{}:
	default:
	}
}

func has(links []*link, l *link) bool {
	for _, x := range links {
		if x == l {
			return true
		}
	}
	return false
}

// link returns c's connection to n, taken from n's pool, bounded by ctx,
// if c has none yet. c.mu is held.
func (c *conn) link(ctx context.Context, n *node) (*link, error) {
	for _, l := range c.links {
		if l.n == n {
			return l, nil
		}
	}
	rc, err := n.pool.GetContext(ctx)
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		c.p.topo.request() // the node may be gone
		return nil, c.fail(fmt.Errorf("connect to %s: %w", n.addr, err))
	}
	l := &link{n: n, c: rc}
	c.links = append(c.links, l)
	return l, nil
}

// fail marks c failed with err and returns it; c.mu is held. The map
// may be out of date when a node fails, so it asks for a refresh.
func (c *conn) fail(err error) error {
	if c.err == nil {
		c.err = err
		c.signal()
	}
	c.p.topo.request()
	return c.err
}

// Flush writes every node's queued commands.
func (c *conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flush()
}

func (c *conn) flush() error {
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
// failure of one command (this package's sentinels), after which the
// connection is still in step.
func isReply(err error) bool {
	if _, ok := err.(redis.Error); ok {
		return true
	}
	return errors.Is(err, ErrClusterDown) || errors.Is(err, ErrSlotUnserved) || errors.Is(err, ErrRedirected)
}

// Do sends cmd (none when "") and reads every reply awaited, as redigo's
// Do: it returns the last reply and the first error reply; with cmd ""
// the replies as a slice, error replies in it.
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
		if e, ok := err.(redis.Error); ok && cmd == "" {
			r, err = e, nil // in the slice, as redigo's
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
		if first != nil {
			return nil, first
		}
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

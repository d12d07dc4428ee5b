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
				s.err = refused(fmt.Errorf("%s %q: %w", s.name, key, err))
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
		c.p.topo.failed(n.addr) // the node may be gone
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

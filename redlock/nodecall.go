package redlock

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
)

// guarded runs fn and turns a panic in it into an error wrapping
// engine.ErrPanicked.
func guarded(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", engine.ErrPanicked, v)
		}
	}()
	fn()
	return nil
}

// call gets a connection to n and runs op on it, then tells n's breaker
// whether the node replied. It returns the connection for reuse when it is
// still healthy, else nil (and closes it). probe is what n.br.admit said.
//
// A panic in the pool or the connection (a Pool of the user's) becomes the
// node's failure, an error wrapping engine.ErrPanicked: the connection is closed
// (a panic in Close is dropped too) and the answer says the node may hold
// the lock when the request may have been sent.
func (t *technique) call(ctx context.Context, n *node, probe bool, op nodeOp) (c redis.Conn, a answer) {
	settled := false
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("%w: %v", engine.ErrPanicked, v)
			if !settled {
				n.br.settle(probe, false, err)
			}
			sent := c != nil // the request may have gone out
			if sent {
				engine.CloseQuietly(c)
			}
			c, a = nil, answer{node: n.index, vote: voteFailed, err: err, mayHold: sent}
		}
	}()
	c, err := engine.Conn(ctx, n.pool)
	if err != nil {
		settled = true
		n.br.settle(probe, false, err)
		// Nothing was sent: the node cannot hold anything from us.
		return nil, answer{node: n.index, vote: voteFailed, err: err}
	}
	a = op(ctx, n, c)
	a.node = n.index
	// redigo closes a connection on any network or protocol failure; a
	// connection still open got a reply.
	replied := c.Err() == nil
	settled = true
	n.br.settle(probe, replied, a.err)
	if !replied {
		c.Close()
		return nil, a
	}
	return c, a
}

// do runs one command (or, with cmd "", flushes the pipeline and reads
// every pending reply) on c, bounded by ctx's deadline: engine.DoDeadline,
// which uses the connection's read deadline (redis.ConnWithTimeout) rather
// than DoContext, which would start one more goroutine per call: node
// calls only ever end by their deadline (the caller's cancellation does
// not reach them, see fanOut). A deadline that passes while reading is
// reported as context.DeadlineExceeded. A connection without read
// deadlines goes through DoContext (redis.ConnWithContext), and one with
// neither through its plain Do, bounded only by its own timeouts.
func do(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	return engine.DoDeadline(ctx, c, cmd, args...)
}

// doTwo flushes the two commands sent on c and reads their replies,
// bounded by ctx's deadline as do bounds a command. An error reply comes
// back as its error (a redis.Error, firstErr or secondErr, with a nil
// reply); failed is the connection's failure, when it failed (a deadline
// that passes while reading is reported as context.DeadlineExceeded). On
// a connection with read deadlines (redis.ConnWithTimeout) the replies are
// read one by one, which allocates no slice for them; a deadline that has
// passed already still leaves each read a nanosecond, so that a reply is
// either read or the connection fails (and redigo closes it): no reply is
// left pending for the connection's next user to take for its own. Other
// connections read both at once through do.
func doTwo(ctx context.Context, c redis.Conn) (first, second any, firstErr, secondErr, failed error) {
	dl, bounded := ctx.Deadline()
	cwt, timed := c.(redis.ConnWithTimeout)
	if !bounded || !timed {
		replies, err := redis.Values(do(ctx, c, ""))
		switch {
		case err != nil:
			return nil, nil, nil, nil, err
		case len(replies) != 2:
			return nil, nil, nil, nil, fmt.Errorf("pipeline of 2 commands got %d replies", len(replies))
		}
		first, firstErr = splitError(replies[0])
		second, secondErr = splitError(replies[1])
		return first, second, firstErr, secondErr, nil
	}
	if err := c.Flush(); err != nil {
		return nil, nil, nil, nil, err
	}
	receive := func() (any, error, error) {
		reply, err := engine.ReceiveBy(cwt, dl)
		if e, refused := err.(redis.Error); refused {
			return nil, e, nil
		}
		return reply, nil, err
	}
	if first, firstErr, failed = receive(); failed != nil {
		return nil, nil, nil, nil, failed // no second reply on a failed connection
	}
	if second, secondErr, failed = receive(); failed != nil {
		return nil, nil, nil, nil, failed
	}
	return first, second, firstErr, secondErr, nil
}

// splitError returns an error reply as its error, and any other reply as
// it is.
func splitError(reply any) (any, error) {
	if e, ok := reply.(redis.Error); ok {
		return nil, e
	}
	return reply, nil
}

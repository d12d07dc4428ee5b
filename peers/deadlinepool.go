package peers

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// deadlinePool gives redsync's redigo driver connections whose commands
// end by the deadline of the context they were borrowed with.
//
// redsync bounds each call on each node with a context (for an acquire,
// WithTimeoutFactor: 5% of the expiry), but its redigo driver sends the
// commands with Do, which ignores it; on a frozen node such a Do never
// returns, and redsync waits for every node. redsync's go-redis driver
// passes the context on. deadlinePool makes the redigo driver keep
// redsync's bound as the go-redis one does: a command on a connection
// borrowed under a deadline times out at that deadline. It keeps the
// deadline, not the context.
type deadlinePool struct{ p strategy.Pool }

// Get is the redigo driver's fallback for a nil context; redsync always
// passes one.
func (d deadlinePool) Get() redis.Conn {
	c, err := d.p.GetContext(context.Background())
	if err != nil {
		return errorConn{err}
	}
	return c
}

func (d deadlinePool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := d.p.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return c, nil
	}
	return deadlineConn{Conn: c, deadline: dl}, nil
}

// deadlineConn ends each command by deadline.
type deadlineConn struct {
	redis.Conn
	deadline time.Time
}

func (c deadlineConn) Do(cmd string, args ...any) (any, error) {
	left := time.Until(c.deadline)
	if left <= 0 {
		return nil, context.DeadlineExceeded
	}
	return redis.DoWithTimeout(c.Conn, left, cmd, args...)
}

// errorConn is a connection that could not be had.
type errorConn struct{ err error }

var errNoConn = errors.New("lockzoo: peers: no connection")

func (e errorConn) Close() error                   { return nil }
func (e errorConn) Err() error                     { return errors.Join(errNoConn, e.err) }
func (e errorConn) Do(string, ...any) (any, error) { return nil, e.Err() }
func (e errorConn) Send(string, ...any) error      { return e.Err() }
func (e errorConn) Flush() error                   { return e.Err() }
func (e errorConn) Receive() (any, error)          { return nil, e.Err() }

package redisconn

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// Command is one Redis command, its name and arguments. The zero
// Command is none.
type Command struct {
	Name string
	Args []any
}

// Reply is the server's reply to one command: its value, or the error
// reply (a redis.Error, or a *Refusal of the pool's connection) as Err.
type Reply struct {
	Value any
	Err   error
}

// reply splits a command's outcome into its reply, an error reply or a
// Refusal included, and the connection's failure.
func reply(v any, err error) (Reply, error) {
	if e, refused := err.(redis.Error); refused {
		return Reply{Err: e}, nil
	}
	if IsRefusal(err) {
		return Reply{Err: err}, nil
	}
	return Reply{Value: v}, err
}

// doAlone runs first, and second unless it is zero, on a connection of
// its own from p's pool, bounded by ctx: the Pipeline's path for a caller
// with nothing else under way (see Pipeline). It returns the replies, and
// the connection's failure when they did not come (wrapping ErrNotSent
// when the pool gave no connection; wrapping ctx.Err() too when ctx ended,
// as WithConn does; wrapping ErrPanicked for a panic in the pool or the
// connection).
func (p *Pipeline) doAlone(ctx context.Context, first, second Command) (r1, r2 Reply, err error) {
	defer func() {
		// A panic in the pool or the connection (a Pool of the user's),
		// as on the shared connection (write, receive).
		if v := recover(); v != nil {
			r1, r2, err = Reply{}, Reply{}, fmt.Errorf("%w: %v", ErrPanicked, v)
		}
	}()
	c, err := Conn(ctx, p.pool)
	if err != nil {
		return r1, r2, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	defer CloseQuietly(c)
	switch {
	case second.Name != "":
		r1, r2, err = p.doTwoOn(ctx, c, first, second)
	case p.byDeadline:
		r1, err = reply(DoDeadline(ctx, c, first.Name, first.Args...))
	default:
		r1, err = reply(DoContext(ctx, c, first.Name, first.Args...))
	}
	return r1, r2, withCtxErr(ctx, err)
}

// doTwoOn sends first and second on c and reads their replies, bounded
// by ctx. With a Pipeline of NewDeadlinePipeline, a ctx with a deadline
// and a connection with read deadlines (redis.ConnWithTimeout), the
// replies are read one by one by that deadline (ReceiveBy), which costs
// neither a goroutine nor a slice for them: a deadline that has passed
// still leaves each read a nanosecond, so that a reply is either read or
// the connection fails (and redigo closes it), and no reply is left
// pending for the connection's next user to take for its own. Otherwise
// both are read at once through DoContext.
func (p *Pipeline) doTwoOn(ctx context.Context, c redis.Conn, first, second Command) (r1, r2 Reply, err error) {
	if err := c.Send(first.Name, first.Args...); err != nil {
		return r1, r2, err
	}
	if err := c.Send(second.Name, second.Args...); err != nil {
		return r1, r2, err
	}
	dl, bounded := ctx.Deadline()
	cwt, timed := c.(redis.ConnWithTimeout)
	if !p.byDeadline || !bounded || !timed {
		replies, err := redis.Values(DoContext(ctx, c, ""))
		switch {
		case err != nil:
			return r1, r2, err
		case len(replies) != 2:
			return r1, r2, fmt.Errorf("pipeline of 2 commands got %d replies", len(replies))
		}
		return replyOf(replies[0]), replyOf(replies[1]), nil
	}
	if err := c.Flush(); err != nil {
		return r1, r2, err
	}
	if r1, err = reply(ReceiveBy(cwt, dl)); err != nil {
		return Reply{}, r2, err // no second reply on a failed connection
	}
	if r2, err = reply(ReceiveBy(cwt, dl)); err != nil {
		return Reply{}, Reply{}, err
	}
	return r1, r2, nil
}

// replyOf is the Reply of one value from a pipeline's replies, where an
// error reply is a redis.Error value, a refused command a *Refusal.
func replyOf(v any) Reply {
	switch e := v.(type) {
	case redis.Error:
		return Reply{Err: e}
	case error:
		if IsRefusal(e) {
			return Reply{Err: e}
		}
	}
	return Reply{Value: v}
}

// write sends cmds on conn and flushes them, turning a panic into an
// error wrapping ErrPanicked.
func write(conn redis.Conn, cmds []Command) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, v)
		}
	}()
	for _, c := range cmds {
		if err := conn.Send(c.Name, c.Args...); err != nil {
			return err
		}
	}
	return conn.Flush()
}

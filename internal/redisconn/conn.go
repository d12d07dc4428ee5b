package redisconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Pool is where connections come from: a *redis.Pool, or any pool of the
// user's with the same GetContext.
type Pool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// IsNil reports whether v is nil or a nil pointer in an interface (a nil
// *redis.Pool passed as a Pool), which a nil check alone misses.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// ErrNilConn is what a call returns when the Pool's GetContext returned
// neither a connection nor an error: a connection failure like any other.
var ErrNilConn = errors.New("lockzoo: the pool returned a nil connection and no error")

// Conn gets a connection from pool, bounded by ctx. It returns ctx's error
// without asking the pool when ctx has already ended, so a dead context
// never takes (and then spoils) a pooled connection, and an error wrapping
// ErrNilConn when the pool returns (nil, nil).
func Conn(ctx context.Context, pool Pool) (redis.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	conn, err := pool.GetContext(ctx)
	switch {
	case err != nil:
		if conn != nil {
			conn.Close() // redigo hands back an error connection; others may not
		}
		return nil, withCtxErr(ctx, fmt.Errorf("get connection: %w", err))
	case IsNil(conn):
		return nil, fmt.Errorf("get connection: %w", ErrNilConn)
	}
	return conn, nil
}

// WithConn gets a connection from pool (see Conn), runs fn on it and
// returns the connection to the pool. fn must bound its own commands with
// ctx (DoContext). A ctx that has already ended returns its error before
// any connection is taken.
//
// When ctx ended before the call finished, the error wraps ctx.Err() too:
// the read deadline redigo derives from ctx can fire a moment before ctx
// reports done, and callers match on ctx.Err().
//
// A panic in the pool or the connection (a Pool of the user's) is
// returned as an error wrapping ErrPanicked.
func WithConn(ctx context.Context, pool Pool, fn func(redis.Conn) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, v)
		}
	}()
	conn, err := Conn(ctx, pool)
	if err != nil {
		return err
	}
	defer CloseQuietly(conn)
	return withCtxErr(ctx, fn(conn))
}

// withCtxErr adds ctx.Err() to a non-nil err that does not carry it yet.
func withCtxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cerr := ctx.Err()
	if cerr == nil {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			cerr = context.DeadlineExceeded
		}
	}
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	return fmt.Errorf("%w: %w", cerr, err)
}

// Do runs one command on a connection from pool, bounded by ctx (see
// DoContext).
func Do(ctx context.Context, pool Pool, cmd string, args ...any) (any, error) {
	var reply any
	err := WithConn(ctx, pool, func(c redis.Conn) error {
		var err error
		reply, err = DoContext(ctx, c, cmd, args...)
		return err
	})
	return reply, err
}

// DoContext runs one command on c (with cmd "", flushes the pipeline and
// reads every pending reply) bounded by ctx, whatever c implements:
//
//   - a ctx that can never end (context.Background, WithoutCancel): c.Do,
//     without the goroutine redigo starts per call to watch a context; one
//     that can only reach a deadline (a Bounded over such a ctx): as with
//     redis.ConnWithTimeout below, also without a goroutine;
//   - a ctx that has ended: its error, and nothing is sent;
//   - c implements redis.ConnWithContext (redigo's own connections):
//     redis.DoContext, which ctx's cancellation and deadline both bound;
//   - otherwise c implements redis.ConnWithTimeout and ctx has a deadline:
//     DoWithTimeout with the time left to it; a read that passes it is
//     reported as context.DeadlineExceeded;
//   - otherwise (a bare redis.Conn, or no deadline): c.Do, bounded only by
//     c's own timeouts (redis.DialReadTimeout); ctx is checked before the
//     command but cannot interrupt it.
func DoContext(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	if cancelDone(ctx) == nil {
		if _, bounded := ctx.Deadline(); bounded { // a Bounded over a ctx that can never end
			return doDeadline(ctx, c, cmd, args...)
		}
		return c.Do(cmd, args...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cwc, ok := c.(redis.ConnWithContext); ok {
		return cwc.DoContext(ctx, cmd, args...)
	}
	return doDeadline(ctx, c, cmd, args...)
}

// DoDeadline is DoContext for a call that only ever ends by ctx's
// deadline, never by a cancellation: it prefers the
// connection's read deadline (redis.ConnWithTimeout), which costs no
// goroutine, and falls back to DoContext.
func DoDeadline(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	if _, ok := ctx.Deadline(); ok {
		if _, timed := c.(redis.ConnWithTimeout); timed {
			return doDeadline(ctx, c, cmd, args...)
		}
	}
	return DoContext(ctx, c, cmd, args...)
}

// DoWatched is DoContext for a connection inside WATCH or MULTI, which a
// redigo pool answers with UNWATCH or DISCARD when it takes the
// connection back. It never uses redigo's DoContext: when ctx ends, that
// returns at once while its goroutine goes on writing the command, and
// the pool's UNWATCH then races with it on the connection's buffer (seen
// under -race: setnx_expire's owner-checked release cut off by its
// bound). ctx's deadline bounds the command through the read deadline
// (redis.ConnWithTimeout); a cancellation is seen before the command, not
// during it; with neither, c's own timeouts bound it.
func DoWatched(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return doDeadline(ctx, c, cmd, args...)
}

// doDeadline bounds one command by ctx's deadline through the connection's
// read deadline when c implements redis.ConnWithTimeout and ctx has a
// deadline, and sends it with c.Do otherwise.
func doDeadline(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	dl, ok := ctx.Deadline()
	cwt, timed := c.(redis.ConnWithTimeout)
	if !ok || !timed {
		return c.Do(cmd, args...)
	}
	d := time.Until(dl)
	if d <= 0 {
		return nil, context.DeadlineExceeded
	}
	reply, err := cwt.DoWithTimeout(d, cmd, args...)
	return reply, deadlineErr(err)
}

// ReceiveBy reads one reply from c with deadline as its read deadline. A
// deadline that has passed still leaves the read a nanosecond (0 would
// mean no deadline at all), so that a reply already there is read and
// otherwise the connection fails (redigo closes it) rather than waits; a
// read that passes the deadline is reported as context.DeadlineExceeded.
func ReceiveBy(c redis.ConnWithTimeout, deadline time.Time) (any, error) {
	reply, err := c.ReceiveWithTimeout(max(time.Until(deadline), time.Nanosecond))
	return reply, deadlineErr(err)
}

// deadlineErr reports a read that passed its deadline as
// context.DeadlineExceeded too, and returns any other err as it is.
func deadlineErr(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// ErrPanicked marks a failure that was a panic in a Pool or connection,
// recovered so that it cannot crash the process from a goroutine of
// lockzoo's.
var ErrPanicked = errors.New("lockzoo: the pool or connection panicked")

// CloseQuietly closes conn (returns it to its pool), dropping a panic in
// its Close.
func CloseQuietly(conn redis.Conn) {
	defer func() { _ = recover() }()
	conn.Close()
}

// Eval runs script on a connection from pool with EVALSHA, falling back to
// EVAL when the server does not have it cached (NOSCRIPT), bounded by ctx
// as DoContext bounds a command.
func Eval(ctx context.Context, pool Pool, script *redis.Script, keysAndArgs ...any) (any, error) {
	var reply any
	err := WithConn(ctx, pool, func(c redis.Conn) error {
		var err error
		reply, err = EvalOn(ctx, c, script, keysAndArgs...)
		return err
	})
	return reply, err
}

// EvalOn is Eval on the connection c.
func EvalOn(ctx context.Context, c redis.Conn, script *redis.Script, keysAndArgs ...any) (any, error) {
	_, bounded := ctx.Deadline()
	switch {
	case cancelDone(ctx) == nil && !bounded: // as in DoContext
		return script.Do(c, keysAndArgs...)
	case cancelDone(ctx) != nil:
		if _, ok := c.(redis.ConnWithContext); ok {
			return script.DoContext(ctx, c, keysAndArgs...)
		}
	}
	// Script.Do knows only Do: send EVALSHA, and EVAL on NOSCRIPT, through
	// DoContext's pipeline flush instead.
	reply, err := evalSent(ctx, c, script.SendHash(c, keysAndArgs...))
	if IsNoScript(err) {
		reply, err = evalSent(ctx, c, script.Send(c, keysAndArgs...))
	}
	return reply, err
}

// evalSent reads the reply of the one script command sent on c (sendErr is
// the Send's error), an error reply as the error.
func evalSent(ctx context.Context, c redis.Conn, sendErr error) (any, error) {
	if sendErr != nil {
		return nil, sendErr
	}
	replies, err := redis.Values(DoContext(ctx, c, ""))
	switch {
	case err != nil:
		return nil, err
	case len(replies) != 1:
		return nil, fmt.Errorf("script got %d replies, want 1", len(replies))
	}
	if e, ok := replies[0].(redis.Error); ok {
		return nil, e
	}
	return replies[0], nil
}

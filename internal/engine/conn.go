package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/strategy"
)

// CheckPool returns an error wrapping strategy.ErrInvalidConfig when pool is
// nil. name is the field or argument to name in the message.
func CheckPool(pool strategy.Pool, name string) error {
	if pool == nil || isNilPointer(pool) {
		return fmt.Errorf("%w: %s is nil", strategy.ErrInvalidConfig, name)
	}
	return nil
}

// isNilPointer reports a typed nil, such as a nil *redis.Pool stored in the
// interface.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// ErrNilConn is what a call returns when the Pool's GetContext returned
// neither a connection nor an error. It is a Redis failure like any other:
// it matches neither strategy.ErrNotAcquired nor strategy.ErrNotHeld.
var ErrNilConn = errors.New("lockzoo: the pool returned a nil connection and no error")

// Conn gets a connection from pool, bounded by ctx. It returns ctx's error
// without asking the pool when ctx has already ended, so a dead context
// never takes (and then spoils) a pooled connection, and an error wrapping
// ErrNilConn when the pool returns (nil, nil).
func Conn(ctx context.Context, pool strategy.Pool) (redis.Conn, error) {
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
	case conn == nil || isNilPointer(conn):
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
func WithConn(ctx context.Context, pool strategy.Pool, fn func(redis.Conn) error) error {
	conn, err := Conn(ctx, pool)
	if err != nil {
		return err
	}
	defer conn.Close()
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

// Do runs one command on a connection from pool, bounded by ctx: the
// connection wait, the write and the read all end when ctx does.
func Do(ctx context.Context, pool strategy.Pool, cmd string, args ...any) (any, error) {
	var reply any
	err := WithConn(ctx, pool, func(c redis.Conn) error {
		var err error
		reply, err = DoContext(ctx, c, cmd, args...)
		return err
	})
	return reply, err
}

// DoContext is redis.DoContext without its cost where ctx can never end
// (context.Background, context.WithoutCancel): redigo bounds a call by a
// context with a goroutine per call, which a context without a Done channel
// does not need.
func DoContext(ctx context.Context, c redis.Conn, cmd string, args ...any) (any, error) {
	if ctx.Done() == nil {
		return c.Do(cmd, args...)
	}
	return redis.DoContext(c, ctx, cmd, args...)
}

// Eval runs script on a connection from pool with EVALSHA, falling back to
// EVAL when the server does not have it cached (NOSCRIPT), bounded by ctx.
func Eval(ctx context.Context, pool strategy.Pool, script *redis.Script, keysAndArgs ...any) (any, error) {
	var reply any
	err := WithConn(ctx, pool, func(c redis.Conn) error {
		var err error
		if ctx.Done() == nil { // as in DoContext
			reply, err = script.Do(c, keysAndArgs...)
		} else {
			reply, err = script.DoContext(ctx, c, keysAndArgs...)
		}
		return err
	})
	return reply, err
}

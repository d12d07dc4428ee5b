package setnxexpire

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// watched runs the article's release loop on one connection: WATCH the key,
// GET it, and if it still holds h's token run cmd inside MULTI/EXEC. When
// EXEC aborts because the key was written after WATCH (redis-py's
// WatchError) it starts over, until the GET no longer matches, the
// transaction commits, or ctx ends. point is the fault point reached on
// every pass between the matching GET and MULTI. cmd must reply 1 when it
// acted on the key (DEL, EXPIRE).
func (t *technique) watched(ctx context.Context, h engine.Held, point, cmd string, args ...any) error {
	return engine.WithConn(ctx, t.pool, func(c redis.Conn) error {
		for {
			done, err := watchedOnce(ctx, c, h, point, cmd, args...)
			if done || err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("lockzoo: setnx_expire: %s %q: retry after an aborted transaction: %w", cmd, h.Key, err)
			}
		}
	})
}

// watchedOnce makes one pass of watched. It returns done=false with a nil
// error when EXEC was aborted and the pass should be repeated.
func watchedOnce(ctx context.Context, c redis.Conn, h engine.Held, point, cmd string, args ...any) (done bool, err error) {
	if _, err := redis.DoContext(c, ctx, "WATCH", h.Key); err != nil {
		return false, fmt.Errorf("lockzoo: setnx_expire: WATCH %q: %w", h.Key, err)
	}
	got, err := redis.String(redis.DoContext(c, ctx, "GET", h.Key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return false, fmt.Errorf("lockzoo: setnx_expire: GET %q: %w", h.Key, err)
	}
	if err != nil || got != h.Value {
		if _, err := redis.DoContext(c, ctx, "UNWATCH"); err != nil {
			return false, fmt.Errorf("lockzoo: setnx_expire: UNWATCH %q: %w", h.Key, err)
		}
		return true, fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
	}
	if err := fault.At(ctx, point); err != nil {
		return false, err
	}
	if err := c.Send("MULTI"); err != nil {
		return false, fmt.Errorf("lockzoo: setnx_expire: MULTI: %w", err)
	}
	if err := c.Send(cmd, args...); err != nil {
		return false, fmt.Errorf("lockzoo: setnx_expire: %s %q: %w", cmd, h.Key, err)
	}
	replies, err := redis.Values(redis.DoContext(c, ctx, "EXEC"))
	switch {
	case errors.Is(err, redis.ErrNil):
		return false, nil // aborted: the key was written after WATCH
	case err != nil:
		return false, fmt.Errorf("lockzoo: setnx_expire: MULTI %s EXEC %q: %w", cmd, h.Key, err)
	case len(replies) != 1:
		return false, fmt.Errorf("lockzoo: setnx_expire: EXEC %q: %d replies, want 1", h.Key, len(replies))
	}
	n, err := redis.Int(replies[0], nil)
	switch {
	case err != nil:
		return false, fmt.Errorf("lockzoo: setnx_expire: %s %q in EXEC: %w", cmd, h.Key, err)
	case n == 0:
		// The key expired between GET and EXEC without aborting it.
		return true, fmt.Errorf("%w: the key expired during the transaction", strategy.ErrNotHeld)
	}
	return true, nil
}

package article

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// Watched runs the optimistic owner-checked transaction of article 000 on
// one connection from pool: WATCH the key, GET it, and, when it holds
// h.Value, reach point and send MULTI, cmd (and, when publish is set, a
// PUBLISH of an empty notice on h.Channel()), EXEC in one round trip. When
// EXEC aborts because the key was written after WATCH (redis-py's
// WatchError) it starts over, until the GET no longer matches, the
// transaction commits, or ctx ends.
//
// cmd must reply 1 when it acted on the key (DEL, EXPIRE, PEXPIRE). The
// error wraps strategy.ErrNotHeld when GET shows the lock is not h's (after
// an UNWATCH) or when cmd found the key gone; other errors are Redis
// failures. Left early with an error (a fault hook, ctx), the connection
// still watches the key; redigo's pool sends UNWATCH when it takes it back,
// which is why every command goes through redisconn.DoWatched: ctx's
// deadline bounds each one, and a cancellation is seen between them.
func Watched(ctx context.Context, pool strategy.Pool, h engine.Held, point string, publish bool, cmd string, args ...any) error {
	return redisconn.WithConn(ctx, pool, func(c redis.Conn) error {
		for {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s %q: %w", cmd, h.Key, err)
			}
			done, err := watchedOnce(ctx, c, h, point, publish, cmd, args...)
			if done || err != nil {
				return err
			}
		}
	})
}

// watchedOnce makes one pass of Watched; done is false, with a nil error,
// when EXEC aborted and the pass must be repeated.
func watchedOnce(ctx context.Context, c redis.Conn, h engine.Held, point string, publish bool, cmd string, args ...any) (done bool, err error) {
	if _, err := redisconn.DoWatched(ctx, c, "WATCH", h.Key); err != nil {
		return false, fmt.Errorf("WATCH %q: %w", h.Key, err)
	}
	got, err := redis.String(redisconn.DoWatched(ctx, c, "GET", h.Key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return false, fmt.Errorf("GET %q: %w", h.Key, err)
	}
	if err != nil || got != h.Value {
		if _, err := redisconn.DoWatched(ctx, c, "UNWATCH"); err != nil {
			return false, fmt.Errorf("UNWATCH %q: %w", h.Key, err)
		}
		return true, fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
	}
	if err := fault.At(ctx, point); err != nil {
		return false, err
	}
	want := 1
	if err := c.Send("MULTI"); err != nil {
		return false, fmt.Errorf("MULTI: %w", err)
	}
	if err := c.Send(cmd, args...); err != nil {
		return false, fmt.Errorf("%s %q: %w", cmd, h.Key, err)
	}
	if publish {
		want++
		if err := c.Send("PUBLISH", h.Channel(), ""); err != nil {
			return false, fmt.Errorf("PUBLISH %q: %w", h.Channel(), err)
		}
	}
	replies, err := redis.Values(redisconn.DoWatched(ctx, c, "EXEC"))
	switch {
	case errors.Is(err, redis.ErrNil):
		return false, nil // aborted: the key was written after WATCH
	case err != nil:
		return false, fmt.Errorf("MULTI %s EXEC %q: %w", cmd, h.Key, err)
	case len(replies) != want:
		return false, fmt.Errorf("EXEC %q: %d replies, want %d", h.Key, len(replies), want)
	}
	n, err := redis.Int(replies[0], nil)
	switch {
	case err != nil:
		return false, fmt.Errorf("%s %q in EXEC: %w", cmd, h.Key, err)
	case n == 0:
		// The key expired between GET and EXEC without aborting it.
		return true, fmt.Errorf("%w: the key expired during the transaction", strategy.ErrNotHeld)
	}
	return true, nil
}

// DeleteAndPublish sends DEL key and PUBLISH channel "" on c in one round
// trip, and returns how many keys DEL removed.
func DeleteAndPublish(ctx context.Context, c redis.Conn, key, channel string) (int, error) {
	if err := c.Send("DEL", key); err != nil {
		return 0, fmt.Errorf("DEL %q: %w", key, err)
	}
	if err := c.Send("PUBLISH", channel, ""); err != nil {
		return 0, fmt.Errorf("PUBLISH %q: %w", channel, err)
	}
	replies, err := redis.Values(redisconn.DoContext(ctx, c, ""))
	if err != nil {
		return 0, fmt.Errorf("DEL %q + PUBLISH: %w", key, err)
	}
	if len(replies) != 2 {
		return 0, fmt.Errorf("DEL %q + PUBLISH: %d replies, want 2", key, len(replies))
	}
	n, err := redis.Int(replies[0], nil)
	if err != nil {
		return 0, fmt.Errorf("DEL %q: %w", key, err)
	}
	return n, nil
}

// DeleteHeld is the release without an owner check of the article
// techniques that have none (getset_timestamp and its methods 1 and 2): DEL
// whatever h's key holds, with the release notice on h.Channel(), in one
// round trip on a connection from pool. It returns an error wrapping
// strategy.ErrNotHeld only when there was no key to delete, and the Redis
// failure otherwise.
func DeleteHeld(ctx context.Context, pool strategy.Pool, h engine.Held) error {
	var n int
	err := redisconn.WithConn(ctx, pool, func(c redis.Conn) error {
		var err error
		n, err = DeleteAndPublish(ctx, c, h.Key, h.Channel())
		return err
	})
	switch {
	case err != nil:
		return err // DeleteAndPublish names the DEL
	case n == 0:
		return fmt.Errorf("%w: the key was already gone", strategy.ErrNotHeld)
	}
	return nil
}

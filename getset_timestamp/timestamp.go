package getsettimestamp

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/stamp"
)

// restore is called when GETSET returned old, a value that is not a
// timestamp, after writing ours over it: the value changed between the GET
// that showed a timestamp and the GETSET. It writes old back, under WATCH
// and only while the key still holds ours, so a write made since the
// GETSET is left alone. A TTL the overwritten key had is lost (GETSET
// cleared it). It returns an error wrapping ErrNotTimestamp that says
// whether the value was put back.
func restore(ctx context.Context, c redis.Conn, key, ours, old string) error {
	bad := stamp.NotTimestamp(ErrNotTimestamp, key, old)
	restored, err := restoreOnce(ctx, c, key, ours, old)
	switch {
	case err != nil:
		return fmt.Errorf("%w; GETSET overwrote it, and putting it back failed: %w", bad, err)
	case !restored:
		return fmt.Errorf("%w; GETSET overwrote it, and the key changed again before it could be put back", bad)
	}
	return fmt.Errorf("%w; GETSET overwrote it, and it was put back (without any TTL it had)", bad)
}

func restoreOnce(ctx context.Context, c redis.Conn, key, ours, old string) (bool, error) {
	if _, err := redisconn.DoWatched(ctx, c, "WATCH", key); err != nil {
		return false, fmt.Errorf("WATCH: %w", err)
	}
	got, err := redis.String(redisconn.DoWatched(ctx, c, "GET", key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return false, fmt.Errorf("GET: %w", err)
	}
	if err != nil || got != ours {
		if _, err := redisconn.DoWatched(ctx, c, "UNWATCH"); err != nil {
			return false, fmt.Errorf("UNWATCH: %w", err)
		}
		return false, nil
	}
	if err := c.Send("MULTI"); err != nil {
		return false, fmt.Errorf("MULTI: %w", err)
	}
	if err := c.Send("SET", key, old); err != nil {
		return false, fmt.Errorf("SET: %w", err)
	}
	replies, err := redis.Values(redisconn.DoWatched(ctx, c, "EXEC"))
	switch {
	case errors.Is(err, redis.ErrNil):
		return false, nil // the key was written after WATCH
	case err != nil:
		return false, fmt.Errorf("MULTI SET EXEC: %w", err)
	case len(replies) != 1:
		return false, fmt.Errorf("EXEC: %d replies, want 1", len(replies))
	}
	if _, err := redis.String(replies[0], nil); err != nil {
		return false, fmt.Errorf("SET in EXEC: %w", err)
	}
	return true, nil
}

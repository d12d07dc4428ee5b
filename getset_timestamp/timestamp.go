package getsettimestamp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
)

// stamp is an expiry time in Unix milliseconds, as stored in the lock key.
type stamp int64

// expiryAt returns the expiry time of a lock of length ttl taken at now,
// and the lock's validity counted from now. The expiry is truncated to the
// millisecond, so the validity is at most ttl.
func expiryAt(now time.Time, ttl time.Duration) (stamp, time.Duration) {
	exp := now.UnixMilli() + max(ttl.Milliseconds(), 1)
	return stamp(exp), time.UnixMilli(exp).Sub(now)
}

// String formats s as the value stored in Redis: decimal Unix milliseconds.
func (s stamp) String() string { return strconv.FormatInt(int64(s), 10) }

// passed reports whether s lies before now, the article's `now > stored`.
func (s stamp) passed(now time.Time) bool { return int64(s) < now.UnixMilli() }

// parseStamp reads a stored value: a non-negative decimal integer of Unix
// milliseconds. ok is false for anything else.
func parseStamp(v string) (s stamp, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return stamp(n), true
}

// maxShown bounds how much of a foreign value an error message quotes.
const maxShown = 64

// notTimestamp builds the error for a key that holds value, which is not a
// timestamp. It wraps ErrNotTimestamp and names the key and the value.
func notTimestamp(key, value string) error {
	if len(value) > maxShown {
		value = value[:maxShown] + "..."
	}
	return fmt.Errorf("%w: key %q holds %q", ErrNotTimestamp, key, value)
}

// restore is called when GETSET returned old, a value that is not a
// timestamp, after writing ours over it: the value changed between the GET
// that showed a timestamp and the GETSET. It writes old back, under WATCH
// and only while the key still holds ours, so a write made since the
// GETSET is left alone. A TTL the overwritten key had is lost (GETSET
// cleared it). It returns an error wrapping ErrNotTimestamp that says
// whether the value was put back.
func restore(ctx context.Context, c redis.Conn, key, ours, old string) error {
	bad := notTimestamp(key, old)
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
	if _, err := engine.DoContext(ctx, c, "WATCH", key); err != nil {
		return false, fmt.Errorf("WATCH: %w", err)
	}
	got, err := redis.String(engine.DoContext(ctx, c, "GET", key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return false, fmt.Errorf("GET: %w", err)
	}
	if err != nil || got != ours {
		if _, err := engine.DoContext(ctx, c, "UNWATCH"); err != nil {
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
	replies, err := redis.Values(engine.DoContext(ctx, c, "EXEC"))
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

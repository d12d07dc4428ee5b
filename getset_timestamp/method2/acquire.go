package method2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/stamp"
	"github.com/lockzoo/lockzoo/strategy"
)

// Acquire makes one attempt, on one connection: SETNX of this client's
// expiry time; else GET, and when the stored time has passed by this
// client's clock, DEL and SETNX once more (when the key is gone, SETNX
// only).
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	now := t.clock()
	exp, validity := stamp.ExpiryAt(now, a.TTL)
	won := engine.Acquired{Value: exp.String(), Validity: validity}
	err := redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		ok, err := setnx(ctx, c, a.Key, exp)
		if err != nil || ok {
			return err
		}
		if err := fault.At(ctx, fault.GetSetTimestampMethod2AcquireBeforeGet); err != nil {
			return err
		}
		cur, err := redis.String(redisconn.DoContext(ctx, c, "GET", a.Key))
		gone := errors.Is(err, redis.ErrNil)
		if err != nil && !gone {
			return fmt.Errorf("GET %q: %w", a.Key, err)
		}
		if !gone {
			stored, ok := stamp.Parse(cur)
			if !ok {
				return stamp.NotTimestamp(ErrNotTimestamp, a.Key, cur) // never DEL another application's key
			}
			if !stored.Passed(now) {
				return fmt.Errorf("%q: %w: held until %d by this client's clock", a.Key, strategy.ErrNotAcquired, stored)
			}
		}
		// The article's flaw: between this GET and the DEL, another waiter
		// that saw the same expired time may have deleted it and taken the
		// lock; this DEL then deletes the new holder's lock.
		if err := fault.At(ctx, fault.GetSetTimestampMethod2AcquireAfterGet); err != nil {
			return err
		}
		// A key GET found gone (released since the SETNX: the article's
		// int(None)) is free, not expired: there is nothing to DEL, and a
		// DEL now could only delete a lock taken since.
		if !gone {
			if _, err := redisconn.DoContext(ctx, c, "DEL", a.Key); err != nil {
				return fmt.Errorf("DEL %q of an expired lock: %w", a.Key, err)
			}
		}
		if err := fault.At(ctx, fault.GetSetTimestampMethod2AcquireAfterDel); err != nil {
			return err
		}
		ok, err = setnx(ctx, c, a.Key, exp)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("%q: %w: taken by another waiter between DEL and SETNX", a.Key, strategy.ErrNotAcquired)
		}
		return nil
	})
	if err != nil {
		return engine.Acquired{}, err
	}
	return won, nil
}

// setnx sends SETNX key exp and reports whether it was set.
func setnx(ctx context.Context, c redis.Conn, key string, exp stamp.Stamp) (bool, error) {
	ok, err := redis.Bool(redisconn.DoContext(ctx, c, "SETNX", key, exp.String()))
	if err != nil {
		return false, fmt.Errorf("SETNX %q: %w", key, err)
	}
	return ok, nil
}

// Release is the article's `delete(lock_key)`: DEL whatever the key holds
// (with the release notice pipelined), without looking at the value or the
// clock. It reports strategy.ErrNotHeld only when there was no key.
func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return article.DeleteHeld(ctx, t.pool, h)
}

// Extend is unsupported: the article has none.
func (t *technique) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, fmt.Errorf("%w: the article's method 2 has no extend", strategy.ErrUnsupported)
}

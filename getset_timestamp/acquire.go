package getsettimestamp

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/stamp"
	"github.com/lockzoo/lockzoo/strategy"
)

// setnxPasses bounds how often one attempt starts over at SETNX when the key
// vanishes between the failed SETNX and the GET.
const setnxPasses = 2

// Acquire makes one attempt, on one connection: SETNX of this client's
// expiry time, else GET, else, when the stored time has passed by this
// client's clock, GETSET. See the package documentation for every outcome.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	var g engine.Acquired
	err := redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		for range setnxPasses {
			var again bool
			var err error
			g, again, err = t.acquireOnce(ctx, c, a)
			if !again {
				return err
			}
		}
		return fmt.Errorf("%q: %w: the key was released and taken again during the attempt", a.Key, strategy.ErrNotAcquired)
	})
	return g, err
}

// acquireOnce makes one pass from SETNX. again reports that the key was
// gone when GET looked, so the pass should start over at SETNX.
func (t *technique) acquireOnce(ctx context.Context, c redis.Conn, a engine.Attempt) (g engine.Acquired, again bool, err error) {
	now := t.clock()
	exp, validity := stamp.ExpiryAt(now, a.TTL)
	won := engine.Acquired{Value: exp.String(), Validity: validity}

	ok, err := redis.Bool(redisconn.DoContext(ctx, c, "SETNX", a.Key, exp.String()))
	if err != nil {
		return engine.Acquired{}, false, fmt.Errorf("SETNX %q: %w", a.Key, err)
	}
	if ok {
		return won, false, nil
	}

	if err := fault.At(ctx, fault.GetSetTimestampAcquireBeforeGet); err != nil {
		return engine.Acquired{}, false, err
	}
	cur, err := redis.String(redisconn.DoContext(ctx, c, "GET", a.Key))
	switch {
	case errors.Is(err, redis.ErrNil):
		// Released between SETNX and GET (the article's int(None) crash):
		// the key is free, so try SETNX again.
		return engine.Acquired{}, true, nil
	case err != nil:
		return engine.Acquired{}, false, fmt.Errorf("GET %q: %w", a.Key, err)
	}
	stored, ok := stamp.Parse(cur)
	if !ok {
		return engine.Acquired{}, false, stamp.NotTimestamp(ErrNotTimestamp, a.Key, cur) // never GETSET over it
	}
	if !stored.Passed(now) {
		return engine.Acquired{}, false, fmt.Errorf("%q: %w: held until %d by this client's clock", a.Key, strategy.ErrNotAcquired, stored)
	}

	// The stored time has passed: take over. Other waiters may be here too.
	if err := fault.At(ctx, fault.GetSetTimestampAcquireBeforeGetSet); err != nil {
		return engine.Acquired{}, false, err
	}
	old, err := redis.String(redisconn.DoContext(ctx, c, "GETSET", a.Key, exp.String()))
	switch {
	case errors.Is(err, redis.ErrNil):
		// Deleted between GET and GETSET (the article's second int(None)):
		// GETSET wrote into an empty key, exactly as SETNX would have.
		return won, false, nil
	case err != nil:
		return engine.Acquired{}, false, fmt.Errorf("GETSET %q: %w", a.Key, err)
	}
	prev, ok := stamp.Parse(old)
	if !ok {
		// Replaced by a foreign value between GET and GETSET, which has
		// already overwritten it: put it back if nobody wrote since.
		return engine.Acquired{}, false, restore(ctx, c, a.Key, exp.String(), old)
	}
	if !prev.Passed(now) {
		// Another waiter's GETSET came first. Ours has already replaced
		// its expiry time with our own: the article's known flaw.
		return engine.Acquired{}, false, fmt.Errorf("%q: %w: another waiter took it over first (its time %d is now overwritten with %d)", a.Key, strategy.ErrNotAcquired, prev, exp)
	}
	return won, false, nil
}

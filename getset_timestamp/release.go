package getsettimestamp

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

// Release is the article's `if now < lock_timeout: delete(lock_key)`: DEL
// the key if this client's clock says the lease's own expiry time has not
// passed. It does not look at what the key holds.
func (t *technique) Release(ctx context.Context, h engine.Held) error {
	exp, ok := stamp.Parse(h.Value)
	if !ok {
		return fmt.Errorf("lease value %q is not a timestamp", h.Value)
	}
	if now := t.clock().UnixMilli(); now >= int64(exp) {
		return fmt.Errorf("%w: its expiry time %d has passed by this client's clock; the key is left alone", strategy.ErrNotHeld, exp)
	}
	// The window between the clock check and DEL: the lock may expire, be
	// taken over, and then be deleted from under its new holder.
	if err := fault.At(ctx, fault.GetSetTimestampReleaseAfterCheck); err != nil {
		return err
	}
	return article.DeleteHeld(ctx, t.pool, h)
}

// Extend writes a later expiry time with GETSET, without an owner check,
// and reads back what it replaced: the lease's own time means success; any
// other value means the lock had been lost, and the GETSET has written over
// it regardless.
func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	now := t.clock()
	exp, validity := stamp.ExpiryAt(now, ttl)
	var g engine.Acquired
	err := redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		old, err := redis.String(redisconn.DoContext(ctx, c, "GETSET", h.Key, exp.String()))
		switch {
		case errors.Is(err, redis.ErrNil):
			return fmt.Errorf("%w: the key was gone; GETSET has created it again with %d", strategy.ErrNotHeld, exp)
		case err != nil:
			return fmt.Errorf("GETSET %q: %w", h.Key, err)
		case old == h.Value:
			g = engine.Acquired{Value: exp.String(), Validity: validity}
			return nil
		}
		if _, ok := stamp.Parse(old); !ok {
			return fmt.Errorf("%w: %w", strategy.ErrNotHeld, restore(ctx, c, h.Key, exp.String(), old))
		}
		return fmt.Errorf("%w: another holder's time %s was there, and GETSET has overwritten it with %d", strategy.ErrNotHeld, old, exp)
	})
	return g, err
}

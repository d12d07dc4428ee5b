package setnxex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker is a single-node Redis lock with a SET NX EX acquire and a
// GET-compare-then-DEL release. It is safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms).
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(properties().Name, err)
	}
	e, err := engine.New(&technique{pool: pool}, properties(), cfg, engine.WithNotices(pool))
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              "set_nx_ex",
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  false, // GET and DEL are two commands
		ClockSafe:         true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 2, // GET, DEL
	}
}

// TryLock makes one attempt to acquire key. It returns the Lease on success,
// an error wrapping strategy.ErrNotAcquired when someone else holds key,
// strategy.ErrInvalidConfig for an empty key, and the wrapped Redis failure
// (matching ctx.Err() when ctx ended) otherwise.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry until it succeeds or ctx
// ends. With a context that never ends it waits like sync.Mutex.Lock. When
// it gives up the error wraps strategy.ErrNotAcquired, ctx.Err() and the last
// Redis failure, if there was one.
//
// The returned Lease's Unlock and Extend return errors wrapping
// strategy.ErrNotHeld when their GET finds another token or no key, or when
// the key vanished before their DEL or EXPIRE. They cannot see a lock that
// changed hands between the GET and the DEL or EXPIRE: see the package
// documentation.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire and clock safety, one round trip to
// acquire and two to release, and no owner-safe release and no tolerance
// of node failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds set_nx_ex's Redis commands.
type technique struct {
	pool strategy.Pool
}

// Acquire is the articles' SET NX EX; the engine prefixes its errors.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	return article.SetNXEX(ctx, t.pool, a)
}

// Release sends GET, compares, then sends DEL: two commands with a window
// between them (fault.SetNXExReleaseAfterGet).
func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return t.checkThen(ctx, h, fault.SetNXExReleaseAfterGet, func(c redis.Conn) (int, error) {
		return article.DeleteAndPublish(ctx, c, h.Key, h.Channel())
	})
}

// Extend sends GET, compares, then sends EXPIRE in whole seconds rounded up
// (fault.SetNXExExtendAfterGet between them).
func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, t.checkThen(ctx, h, fault.SetNXExExtendAfterGet, func(c redis.Conn) (int, error) {
		return redis.Int(redisconn.DoContext(ctx, c, "EXPIRE", h.Key, article.CeilSeconds(ttl)))
	})
}

// checkThen runs GET key on one connection and, when the value is h's
// token, passes point and runs act, which reports how many keys it acted on
// (1 found, 0 gone). Nothing stops the key from changing hands between the
// two.
func (t *technique) checkThen(ctx context.Context, h engine.Held, point string, act func(redis.Conn) (int, error)) error {
	return redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		v, err := redis.String(redisconn.DoContext(ctx, c, "GET", h.Key))
		switch {
		case errors.Is(err, redis.ErrNil):
			return fmt.Errorf("%w: the key is missing", strategy.ErrNotHeld)
		case err != nil:
			return fmt.Errorf("GET %q: %w", h.Key, err)
		case v != h.Value:
			return fmt.Errorf("%w: the key holds another owner's token", strategy.ErrNotHeld)
		}
		if err := fault.At(ctx, point); err != nil {
			return err
		}
		n, err := act(c)
		switch {
		case err != nil:
			return fmt.Errorf("%q after GET: %w", h.Key, err)
		case n == 0:
			return fmt.Errorf("%w: the key expired after GET", strategy.ErrNotHeld)
		}
		return nil
	})
}

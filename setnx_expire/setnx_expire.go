package setnxexpire

import (
	"context"
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

// Locker is a single-node Redis lock taken with SETNX then EXPIRE and
// released with an owner-checked WATCH/MULTI/EXEC transaction. It is safe
// for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms). The TTL is
// sent to Redis in whole seconds, rounded up.
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
		Name:              "setnx_expire",
		MutualExclusion:   true,
		AtomicAcquire:     false,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		AcquireRoundTrips: 2, // SETNX, EXPIRE
		ReleaseRoundTrips: 3, // WATCH, GET, MULTI+DEL+EXEC pipelined
	}
}

// TryLock makes one attempt to acquire key. It returns the Lease on success,
// an error wrapping strategy.ErrNotAcquired when someone else holds key
// (after repairing the key's expiry if it had none), fault.ErrCrashed when a
// test hook stopped it, strategy.ErrInvalidConfig for an empty key, and the
// wrapped Redis failure (matching ctx.Err() when ctx ended) otherwise.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry until it succeeds or ctx
// ends; each failed attempt repairs a key left without an expiry. With a
// context that never ends it waits like sync.Mutex.Lock. When it gives up
// the error wraps strategy.ErrNotAcquired, ctx.Err() and the last Redis
// failure, if there was one.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports a non-atomic acquire (two round trips), an owner-safe
// release (three round trips), clock safety, and no tolerance of node
// failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds setnx_expire's Redis commands.
type technique struct {
	pool strategy.Pool
}

// Acquire sends SETNX, then EXPIRE as a second command. When SETNX fails it
// repairs a key that has no expiry and reports ErrNotAcquired.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	secs := article.CeilSeconds(a.TTL)
	err := redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		won, err := redis.Bool(redisconn.DoContext(ctx, c, "SETNX", a.Key, a.Token))
		if err != nil {
			return fmt.Errorf("SETNX %q: %w", a.Key, err)
		}
		if !won {
			return repair(ctx, c, a.Key, secs)
		}
		// The window the article warns about: the key exists, with no TTL.
		if err := fault.At(ctx, fault.SetNXExpireAcquireAfterSetNX); err != nil {
			return err
		}
		set, err := redis.Bool(redisconn.DoContext(ctx, c, "EXPIRE", a.Key, secs))
		if err != nil {
			// Even refused, the EXPIRE follows a SETNX that wrote: the
			// key is taken back.
			return fmt.Errorf("EXPIRE %q after SETNX: %w (the key is left without a TTL until a waiter repairs it)", a.Key, redisconn.AfterWrite(err))
		}
		if !set {
			return fmt.Errorf("%q: %w: the key vanished between SETNX and EXPIRE", a.Key, strategy.ErrNotAcquired)
		}
		return nil
	})
	return engine.Acquired{}, err
}

// repair is the article's waiting branch: a held key whose TTL is -1 (no
// expiry) gets EXPIRE secs. It always reports the key as held; a failure of
// the repair itself is wrapped alongside ErrNotAcquired.
func repair(ctx context.Context, c redis.Conn, key string, secs int64) error {
	held := fmt.Errorf("%q: %w", key, strategy.ErrNotAcquired)
	ttl, err := redis.Int64(redisconn.DoContext(ctx, c, "TTL", key))
	if err != nil {
		return fmt.Errorf("%w (TTL check failed: %w)", held, err)
	}
	if ttl != -1 {
		return held
	}
	if _, err := redisconn.DoContext(ctx, c, "EXPIRE", key, secs); err != nil {
		return fmt.Errorf("%w (repairing its missing TTL failed: %w)", held, err)
	}
	return held
}

// Release deletes the lock under WATCH if it still holds h's token.
func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return article.Watched(ctx, t.pool, h, fault.SetNXExpireReleaseAfterWatch, true, "DEL", h.Key)
}

// Extend sets the lock's expiry to ttl, rounded up to whole seconds, under
// WATCH if it still holds h's token.
func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, article.Watched(ctx, t.pool, h, fault.SetNXExpireExtendAfterWatch, false, "EXPIRE", h.Key, article.CeilSeconds(ttl))
}

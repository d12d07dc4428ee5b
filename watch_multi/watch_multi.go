package watchmulti

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker is a single-node Redis lock with a SET NX EX acquire and a
// WATCH/MULTI/EXEC owner-checked release. It is safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms).
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, fmt.Errorf("lockzoo: watch_multi: %w", err)
	}
	e, err := engine.New(&technique{pool: pool}, properties(), cfg)
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              "watch_multi",
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 3, // WATCH, GET, then MULTI+DEL+EXEC pipelined
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
// strategy.ErrNotHeld when the key no longer holds the lease's token.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire, owner-safe release and clock safety, one
// round trip to acquire and three to release, and no tolerance of node
// failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// technique holds watch_multi's Redis commands.
type technique struct {
	pool strategy.Pool
}

func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Grant, error) {
	reply, err := engine.Do(ctx, t.pool, "SET", a.Key, a.Token, "NX", "EX", ceilSeconds(a.TTL))
	if err != nil {
		return engine.Grant{}, fmt.Errorf("lockzoo: watch_multi: SET NX EX %q: %w", a.Key, err)
	}
	if reply == nil {
		return engine.Grant{}, fmt.Errorf("lockzoo: watch_multi: %q: %w", a.Key, strategy.ErrNotAcquired)
	}
	return engine.Grant{}, nil
}

func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return t.transact(ctx, fault.WatchMultiReleaseAfterWatch, h, "DEL", h.Key)
}

func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Grant, error) {
	return engine.Grant{}, t.transact(ctx, fault.WatchMultiExtendAfterWatch, h, "PEXPIRE", h.Key, ceilMillis(ttl))
}

// transact runs the article's optimistic transaction on one connection:
// WATCH key, GET key, and, while the value is h's token, MULTI cmd EXEC;
// it starts over whenever EXEC aborts because the key was written after
// WATCH. It returns an error wrapping strategy.ErrNotHeld when GET shows
// the lock is not h's, or when cmd finds the key gone.
func (t *technique) transact(ctx context.Context, point string, h engine.Held, cmd string, args ...any) error {
	return engine.WithConn(ctx, t.pool, func(c redis.Conn) error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			mine, err := watchAndCompare(ctx, c, h)
			if err != nil {
				return err
			}
			// Left here with an error, the connection still watches the
			// key; redigo's pool sends UNWATCH when it takes it back.
			if err := fault.At(ctx, point); err != nil {
				return err
			}
			if !mine {
				if _, err := redis.DoContext(c, ctx, "UNWATCH"); err != nil {
					return fmt.Errorf("UNWATCH %q: %w", h.Key, err)
				}
				return fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
			}
			done, err := execute(ctx, c, cmd, args...)
			if err != nil || done {
				return err
			}
			// EXEC aborted: the key changed after WATCH. Start over.
		}
	})
}

// watchAndCompare sends WATCH key and GET key, and reports whether the key
// holds h's token.
func watchAndCompare(ctx context.Context, c redis.Conn, h engine.Held) (bool, error) {
	if _, err := redis.DoContext(c, ctx, "WATCH", h.Key); err != nil {
		return false, fmt.Errorf("WATCH %q: %w", h.Key, err)
	}
	v, err := redis.String(redis.DoContext(c, ctx, "GET", h.Key))
	switch {
	case errors.Is(err, redis.ErrNil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("GET %q: %w", h.Key, err)
	}
	return v == h.Value, nil
}

// execute sends MULTI, cmd and EXEC in one round trip. It returns false
// when EXEC aborted (a watched key changed), true when cmd ran and changed
// the key, and an error wrapping strategy.ErrNotHeld when cmd ran but found
// no key (it expired after GET).
func execute(ctx context.Context, c redis.Conn, cmd string, args ...any) (bool, error) {
	if err := c.Send("MULTI"); err != nil {
		return false, fmt.Errorf("MULTI: %w", err)
	}
	if err := c.Send(cmd, args...); err != nil {
		return false, fmt.Errorf("%s: %w", cmd, err)
	}
	replies, err := redis.Values(redis.DoContext(c, ctx, "EXEC"))
	switch {
	case errors.Is(err, redis.ErrNil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("MULTI %s EXEC: %w", cmd, err)
	case len(replies) != 1:
		return false, fmt.Errorf("MULTI %s EXEC: %d replies, want 1", cmd, len(replies))
	}
	n, err := redis.Int(replies[0], nil)
	switch {
	case err != nil:
		return false, fmt.Errorf("%s in MULTI: %w", cmd, err)
	case n == 0:
		return false, fmt.Errorf("%w: the key expired before %s ran", strategy.ErrNotHeld, cmd)
	}
	return true, nil
}

// ceilSeconds returns d in whole seconds, rounded up, as the article's
// int(math.ceil(lock_timeout)).
func ceilSeconds(d time.Duration) int64 {
	s := d / time.Second
	if d%time.Second != 0 {
		s++
	}
	return int64(s)
}

// ceilMillis returns d in whole milliseconds, rounded up, so that the key
// never expires before the lease's Deadline.
func ceilMillis(d time.Duration) int64 {
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++
	}
	return int64(ms)
}

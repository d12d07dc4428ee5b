package method1

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// Value is what every holder writes to the lock key: the article's
// `setnx(lock_key, 1)`. Lease.Token returns it.
const Value = "1"

// RetryEvery is the article's `time.sleep(0.5)` between attempts: the
// default Config.Retry is strategy.Fixed(RetryEvery).
const RetryEvery = 500 * time.Millisecond

// Locker is article 004's method 1 (article 003's RedisLock): SETNX of a
// constant with no expiry, released with a plain DEL. It is safe for
// concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms). A nil
// Config.Retry means strategy.Fixed(RetryEvery). Config.TTL is never sent
// to Redis: it only sets each lease's Deadline. Config.Token and
// Config.Clock are not used.
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(name, err)
	}
	if cfg.Retry == nil {
		cfg.Retry = strategy.Fixed(RetryEvery)
	}
	// No take-back (its DEL checks no owner) and no attempt bound: its key
	// never expires, so an attempt cut off at AttemptTimeout whose SETNX
	// still lands would leave a lock that nobody holds, for good. Only the
	// caller's ctx bounds an attempt.
	e, err := engine.New(&technique{pool: pool}, properties(), cfg,
		engine.WithNotices(pool), engine.WithoutTakeBack(), engine.WithoutAttemptBound())
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

// name is the technique's folder, as Properties.Name reports it.
const name = "getset_timestamp/method1"

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              name,
		MutualExclusion:   true,
		AtomicAcquire:     false, // no expiry is ever set
		OwnerSafeRelease:  false, // a plain DEL
		ClockSafe:         true,  // no clock is read
		AcquireRoundTrips: 1,     // SETNX
		ReleaseRoundTrips: 1,     // DEL
	}
}

// TryLock makes one attempt to acquire key: SETNX <prefix><key> 1. It
// returns the Lease on success (its Token is Value), an error wrapping
// strategy.ErrNotAcquired when the key exists, whoever wrote it,
// strategy.ErrInvalidConfig for an empty key, and the wrapped Redis failure
// (matching ctx.Err() when ctx ended) otherwise. A key it writes never
// expires.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry (every 0.5 s by default,
// sooner when a release notice arrives) until it succeeds or ctx ends. A
// lock whose holder died is never freed, so with a context that never ends
// Lock then waits forever. When it gives up the error wraps
// strategy.ErrNotAcquired, ctx.Err() and the last Redis failure, if there
// was one.
//
// The returned Lease's Unlock deletes the key whoever holds it, and returns
// an error wrapping strategy.ErrNotHeld only when the key was already gone;
// its Extend returns an error wrapping strategy.ErrUnsupported.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports one round trip each way and clock safety (no clock
// is read), but no atomic acquire (no expiry is ever set), no owner-safe
// release and no tolerance of node failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds method 1's Redis commands.
type technique struct {
	pool strategy.Pool
}

// Acquire is the article's `setnx(lock_key, 1)`: one SETNX, no expiry.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	won, err := redis.Bool(redisconn.Do(ctx, t.pool, "SETNX", a.Key, Value))
	switch {
	case err != nil:
		return engine.Acquired{}, fmt.Errorf("SETNX %q: %w", a.Key, err)
	case !won:
		return engine.Acquired{}, fmt.Errorf("%q: %w", a.Key, strategy.ErrNotAcquired)
	}
	return engine.Acquired{Value: Value}, nil
}

// Release is the article's `delete(lock_key)`: DEL whatever the key holds
// (with the release notice pipelined). It reports strategy.ErrNotHeld only
// when there was no key to delete.
func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return article.DeleteHeld(ctx, t.pool, h)
}

// Extend is unsupported: the article has no extend, and the key has no
// expiry to extend.
func (t *technique) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, fmt.Errorf("%w: method 1's lock has no expiry to extend", strategy.ErrUnsupported)
}

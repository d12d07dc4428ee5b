package watchmulti

import (
	"context"
	"time"

	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/lockerr"
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
		Name:              "watch_multi",
		MutualExclusion:   true,
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

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds watch_multi's Redis commands.
type technique struct {
	pool strategy.Pool
}

// Acquire is the articles' SET NX EX; the engine prefixes its errors.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	return article.SetNXEX(ctx, t.pool, a)
}

func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return article.Watched(ctx, t.pool, h, fault.WatchMultiReleaseAfterWatch, true, "DEL", h.Key)
}

func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, article.Watched(ctx, t.pool, h, fault.WatchMultiExtendAfterWatch, false, "PEXPIRE", h.Key, article.CeilMillis(ttl))
}

package getsettimestamp

import (
	"context"
	"errors"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// ErrNotTimestamp reports that the lock key holds a value that is not an
// expiry timestamp (decimal Unix milliseconds), most likely a key another
// application owns. It does not match strategy.ErrNotAcquired: TryLock
// returns it as a failure, and Lock retries it like a Redis failure until
// ctx ends, then wraps it as the last failure. The wrapping error names the
// key and the value.
var ErrNotTimestamp = errors.New("lockzoo: getset_timestamp: value is not a timestamp")

// Locker is a single-node Redis lock whose value is the holder's expiry
// time, taken over with GETSET once that time has passed by the client's
// clock. It is safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms).
// Config.Clock is the clock every expiry time is written and compared
// with; Config.Token is not used, since the value is the expiry time.
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(properties().Name, err)
	}
	full, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(properties().Name, err)
	}
	e, err := engine.New(&technique{pool: pool, clock: full.Clock}, properties(), full, engine.WithNotices(pool), engine.WithoutTakeBack())
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              "getset_timestamp",
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  false,
		ClockSafe:         false,
		AcquireRoundTrips: 1, // SETNX
		ReleaseRoundTrips: 1, // DEL
	}
}

// TryLock makes one attempt to acquire key: SETNX of this client's expiry
// time, or a GETSET takeover when the stored time has passed. It returns
// the Lease on success (its Token is the expiry time written), an error
// wrapping strategy.ErrNotAcquired when someone else holds key, an error
// wrapping ErrNotTimestamp when key holds a value that is not a timestamp,
// strategy.ErrInvalidConfig for an empty key, and the wrapped Redis failure
// (matching ctx.Err() when ctx ended) otherwise.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry until it succeeds or ctx
// ends. With a context that never ends it waits like sync.Mutex.Lock, even
// if key holds a value that is not a timestamp. When it gives up the error
// wraps strategy.ErrNotAcquired, ctx.Err() and the last failure (a Redis
// failure or ErrNotTimestamp), if there was one.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports an atomic acquire and one round trip each way, but no
// owner-safe release, no clock safety and no tolerance of node failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds getset_timestamp's Redis commands.
type technique struct {
	pool  strategy.Pool
	clock func() time.Time
}

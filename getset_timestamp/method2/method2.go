package method2

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
// ctx ends. The wrapping error names the key and the value.
var ErrNotTimestamp = errors.New("lockzoo: getset_timestamp/method2: value is not a timestamp")

// RetryEvery is the article's `time.sleep(0.5)` between attempts: the
// default Config.Retry is strategy.Fixed(RetryEvery).
const RetryEvery = 500 * time.Millisecond

// Locker is article 004's method 2: SETNX of the holder's expiry time; a
// waiter that finds that time passed DELs the key and SETNXes again. It is
// safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// name is the technique's folder, as Properties.Name reports it.
const name = "getset_timestamp/method2"

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms). A nil
// Config.Retry means strategy.Fixed(RetryEvery). Config.Clock is the clock
// every expiry time is written and compared with; Config.Token is not used,
// since the value is the expiry time.
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(name, err)
	}
	if cfg.Retry == nil {
		cfg.Retry = strategy.Fixed(RetryEvery)
	}
	full, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	e, err := engine.New(&technique{pool: pool, clock: full.Clock}, properties(), full, engine.WithNotices(pool), engine.WithoutTakeBack())
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              name,
		MutualExclusion:   false, // two waiters that both find one expired lock both take it (TestP2P3BothHold)
		AtomicAcquire:     true,  // one SETNX writes the value and its expiry time
		OwnerSafeRelease:  false, // a plain DEL
		ClockSafe:         false, // the clients' clocks decide when a lock ends
		AcquireRoundTrips: 1,     // SETNX
		ReleaseRoundTrips: 1,     // DEL
	}
}

// TryLock makes one attempt to acquire key: SETNX of this client's expiry
// time, or, when the stored time has passed by this client's clock, DEL and
// SETNX again. It returns the Lease on success (its Token is the expiry
// time written), an error wrapping strategy.ErrNotAcquired when someone
// else holds key, an error wrapping ErrNotTimestamp when key holds a value
// that is not a timestamp, strategy.ErrInvalidConfig for an empty key, and
// the wrapped Redis failure (matching ctx.Err() when ctx ended) otherwise.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry (every 0.5 s by default,
// sooner when a release notice arrives) until it succeeds or ctx ends.
// When it gives up the error wraps strategy.ErrNotAcquired, ctx.Err() and
// the last failure (a Redis failure or ErrNotTimestamp), if there was one.
//
// The returned Lease's Unlock deletes the key whoever holds it, and returns
// an error wrapping strategy.ErrNotHeld only when the key was already gone;
// its Extend returns an error wrapping strategy.ErrUnsupported.
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
// returns nil; a second Close does nothing.
func (l *Locker) Close() error { return l.e.Close() }

// technique holds method 2's Redis commands.
type technique struct {
	pool  strategy.Pool
	clock func() time.Time
}

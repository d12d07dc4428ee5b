package strategy

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Pool hands out Redis connections; *redis.Pool from redigo satisfies it.
//
// Every call that talks to Redis first checks its context: one that has
// ended returns its error without asking the Pool for a connection. A
// GetContext that returns neither a connection nor an error fails the call
// with an error (a Redis failure, never a panic).
//
// Any redis.Conn works; how far a context bounds each command depends on
// what else the connection implements. redis.ConnWithContext (redigo's own
// connections do): the context's cancellation and deadline both end the
// command. Otherwise redis.ConnWithTimeout: the context's deadline does,
// through the connection's read deadline (DoWithTimeout with the time
// left), but a cancellation without a deadline is seen only between
// commands. A connection with neither is bounded only by its own timeouts
// (redis.DialReadTimeout), the context being checked before each command.
// redlock's node calls, bounded by NodeTimeout, prefer
// redis.ConnWithTimeout. Give a *redis.Pool a DialContext so the context
// bounds dialing too.
type Pool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// Locker acquires leases on keys. Implementations are safe for concurrent
// use by multiple goroutines.
//
// Every lockzoo Locker also has Close() error, outside this interface so
// that any lock can be adapted to it: Close ends the Locker's connections
// and goroutines at once; calls after it return an error wrapping
// ErrClosed (a lease's Unlock still releases its lock).
type Locker interface {
	// TryLock makes one attempt to acquire key. On success it returns the
	// Lease. If someone else holds key the error wraps ErrNotAcquired; a
	// failure to reach Redis is returned wrapped and does not match
	// ErrNotAcquired. An empty key wraps ErrInvalidConfig.
	TryLock(ctx context.Context, key string) (Lease, error)

	// Lock retries under the Config's Retry policy until it holds key or
	// ctx ends. With a context that has no deadline and is never cancelled
	// it waits as long as it takes, like sync.Mutex.Lock. When it gives up
	// the error wraps ErrNotAcquired, ctx.Err() (when the context ended) and
	// the last Redis failure seen, if any. Transient Redis failures are
	// retried.
	Lock(ctx context.Context, key string) (Lease, error)

	// Properties says which guarantees this technique claims.
	Properties() Properties
}

// Lease is one holder's claim on a key.
type Lease interface {
	// Key returns the key as the caller named it (without the prefix).
	Key() string
	// Token returns the value this holder wrote to Redis.
	Token() string
	// Fence returns the fencing token; 0 where the technique issues none.
	Fence() uint64
	// Deadline returns the local time after which the holder must assume it
	// lost the lock. It moves when Extend succeeds.
	Deadline() time.Time
	// Extend sets the lock's remaining lifetime to ttl (zero means the
	// Locker's TTL). It returns an error wrapping ErrNotHeld if the lock was
	// lost, ErrUnsupported where the technique cannot extend, and a wrapped
	// Redis failure otherwise.
	Extend(ctx context.Context, ttl time.Duration) error
	// Unlock releases the lock. It returns an error wrapping ErrNotHeld if
	// the lock was no longer ours (expired, taken over, or already
	// released), and a wrapped Redis failure otherwise.
	Unlock(ctx context.Context) error
}

// Properties lists the guarantees a technique claims. The race-condition
// suite (strategytest) checks each claim against real Redis.
type Properties struct {
	Name              string // the technique's folder name, e.g. "lua_release"
	MutualExclusion   bool   // no two clients hold one lock at once, even when waiters take over an expired lock
	AtomicAcquire     bool   // value and expiry are set in one step
	OwnerSafeRelease  bool   // Unlock/Extend never touch a lock someone else now holds
	ClockSafe         bool   // safety does not depend on clients' clocks agreeing
	NodeFaultTolerant bool   // holds through the loss of a Redis node
	Fencing           bool   // leases carry increasing fencing tokens
	AcquireRoundTrips int    // uncontended
	ReleaseRoundTrips int    // uncontended
}

package luarelease

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/scripts"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker is a single-node Redis lock with a Lua compare-and-delete release.
// It is safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms).
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, fmt.Errorf("lockzoo: lua_release: %w", err)
	}
	t := &technique{
		pool:    pool,
		acquire: redis.NewScript(2, acquireSource),
		release: scripts.CompareDelete(),
		extend:  scripts.ComparePExpire(),
	}
	e, err := engine.New(t, properties(), cfg, engine.WithNotices(pool))
	if err != nil {
		return nil, err
	}
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              "lua_release",
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		Fencing:           true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
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
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire, owner-safe release and clock safety, one
// round trip each way, and no tolerance of node failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

//go:embed acquire.lua
var acquireSource string

// FenceKey is the Redis key of the fencing counter kept for the lock key
// rkey (prefix included). The counter never expires: one small integer key
// per lock name ever used.
func FenceKey(rkey string) string { return "lockzoo:fence:" + rkey }

// technique holds lua_release's Redis commands.
type technique struct {
	pool    strategy.Pool
	acquire *redis.Script
	release *redis.Script
	extend  *redis.Script
}

func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Grant, error) {
	reply, err := redis.Int64s(engine.Eval(ctx, t.pool, t.acquire, a.Key, FenceKey(a.Key), a.Token, a.TTL.Milliseconds()))
	switch {
	case err != nil:
		return engine.Grant{}, fmt.Errorf("lockzoo: lua_release: acquire %q: %w", a.Key, err)
	case len(reply) != 2:
		return engine.Grant{}, fmt.Errorf("lockzoo: lua_release: acquire %q: unexpected reply %v", a.Key, reply)
	case reply[0] == 0:
		return engine.Grant{}, fmt.Errorf("lockzoo: lua_release: %w", &engine.BusyError{Key: a.Key, Remaining: time.Duration(reply[1]) * time.Millisecond})
	}
	return engine.Grant{Fence: uint64(reply[1])}, nil
}

func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return t.owned(engine.Eval(ctx, t.pool, t.release, h.Key, h.Value, h.Channel))
}

func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Grant, error) {
	return engine.Grant{}, t.owned(engine.Eval(ctx, t.pool, t.extend, h.Key, h.Value, ttl.Milliseconds()))
}

// owned turns a compare script's reply into nil (1: done) or ErrNotHeld (0).
func (t *technique) owned(reply any, err error) error {
	n, err := redis.Int(reply, err)
	switch {
	case err != nil:
		return err
	case n == 0:
		return fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
	}
	return nil
}

package luarelease

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/scripts"
	"github.com/lockzoo/lockzoo/strategy"
)

// Scripts returns the acquire and release scripts, for the benchmark that
// runs them bare.
func Scripts() (acquire, release *redis.Script) {
	t := testTechnique(nil)
	return t.acquire, t.release
}

// testTechnique builds the technique over pool the way New does.
func testTechnique(pool strategy.Pool) *technique {
	return &technique{
		pool:    pool,
		acquire: redis.NewScript(4, handoffSource+acquireSource),
		abandon: redis.NewScript(4, handoffSource+abandonSource),
		release: redis.NewScript(4, handoffSource+releaseSource),
		extend:  scripts.ComparePExpire(),
	}
}

// AbandonForTest runs the technique's Abandon for the waiter named waiter
// of the Locker named locker, waiting for the Redis key key (prefix
// included) with a lock TTL of ttl: its line member is
// "<ttl ms>/<locker>/<waiter>".
func AbandonForTest(ctx context.Context, pool strategy.Pool, key, waiter, locker string, ttl time.Duration) {
	testTechnique(pool).Abandon(ctx, engine.Attempt{Key: key, Waiter: waiter, TTL: ttl, Waits: true, Locker: locker})
}

// AcquireForTest runs the technique's Acquire for one attempt of a Lock
// call (Waits) with owner token token, by the waiter named waiter of the
// Locker named locker, on the Redis key key (prefix included).
func AcquireForTest(ctx context.Context, pool strategy.Pool, key, token, waiter, locker string, ttl time.Duration) (engine.Grant, error) {
	return testTechnique(pool).Acquire(ctx, engine.Attempt{Key: key, Token: token, Waiter: waiter, TTL: ttl, Waits: true, Locker: locker})
}

package luarelease

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/strategy"
)

// Scripts returns the acquire and release scripts, for the benchmark that
// runs them bare.
func Scripts() (acquire, release *redis.Script) {
	t := newTechnique(nil, FenceRetention)
	return t.acquire.Redis(), t.release.Redis()
}

// AbandonForTest runs the technique's Abandon for the waiter named waiter
// of the Locker named locker, waiting for the Redis key key (prefix
// included) with a lock TTL of ttl: its line member is
// "<ttl ms>/<locker>/<waiter>".
func AbandonForTest(ctx context.Context, pool strategy.Pool, key, waiter, locker string, ttl time.Duration) {
	newTechnique(pool, FenceRetention).Abandon(ctx, engine.Attempt{Key: key, Waiter: waiter, TTL: ttl, Waits: true, Locker: locker})
}

// AcquireForTest runs the technique's Acquire for one attempt of a Lock
// call (Waits) with owner token token, by the waiter named waiter of the
// Locker named locker, on the Redis key key (prefix included).
func AcquireForTest(ctx context.Context, pool strategy.Pool, key, token, waiter, locker string, ttl time.Duration) (engine.Acquired, error) {
	try, pass := attemptOf(token, waiter)
	return newTechnique(pool, FenceRetention).Acquire(ctx, engine.Attempt{Key: key, Token: token, Waiter: waiter, Try: try, Pass: pass, TTL: ttl, Waits: true, Locker: locker})
}

// attemptOf is the attempt (try) or hand-off (pass) number that
// line.Attempt's SetTry or SetPass makes token of for the waiter named
// waiter, or zeros when neither writes token.
func attemptOf(token, waiter string) (try, pass uint64) {
	suffix, _ := strings.CutPrefix(token, waiter+".")
	n, err := strconv.ParseUint(strings.TrimPrefix(suffix, "p"), 10, 64)
	if err != nil || n == 0 {
		return 0, 0
	}
	a := line.Attempt{Waiter: waiter}
	if a.SetTry(n); a.Token == token {
		return n, 0
	}
	if a.SetPass(n); a.Token == token {
		return 0, n
	}
	return 0, 0
}

// NewWithRetention is New with fencing counters kept for retention after
// their lock's TTL instead of FenceRetention.
func NewWithRetention(pool strategy.Pool, cfg strategy.Config, retention time.Duration) (*Locker, error) {
	return newLocker(pool, cfg, retention)
}

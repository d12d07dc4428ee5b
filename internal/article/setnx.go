package article

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// SetNXEX makes the acquire of articles 000 and 002, SET key token NX EX
// seconds, with a's TTL rounded up to whole seconds as their
// int(math.ceil(lock_timeout)) does. It returns an error wrapping
// strategy.ErrNotAcquired when the key is held, and the Redis failure
// otherwise.
func SetNXEX(ctx context.Context, pool strategy.Pool, a engine.Attempt) (engine.Acquired, error) {
	reply, err := redisconn.Do(ctx, pool, "SET", a.Key, a.Token, "NX", "EX", CeilSeconds(a.TTL))
	if err != nil {
		return engine.Acquired{}, fmt.Errorf("SET NX EX %q: %w", a.Key, err)
	}
	if reply == nil {
		return engine.Acquired{}, fmt.Errorf("%q: %w", a.Key, strategy.ErrNotAcquired)
	}
	return engine.Acquired{}, nil
}

// CeilSeconds returns d in whole seconds, rounded up, and at least 1: the
// articles' int(math.ceil(lock_timeout)) for Redis's second-granularity
// EXPIRE and EX.
func CeilSeconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 1)
}

// CeilMillis returns d in whole milliseconds, rounded up, so that a key
// never expires before a lease's Deadline.
func CeilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

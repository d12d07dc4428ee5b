package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// DefaultRedislockRetry is the wait between Lock's attempts on bsm/redislock
// when Config.Retry is nil: redislock.LinearBackoff of this. redislock's own
// default is NoRetry (Options.RetryStrategy: "Default: do not retry"); its
// README and examples use fixed linear backoffs.
const DefaultRedislockRetry = 10 * time.Millisecond

// Redislock is bsm/redislock over a go-redis v9 client of one Redis node
// as a strategy.Locker.
type Redislock struct {
	client *goredis.Client
	rl     *redislock.Client
	cfg    strategy.Config
	closed atomic.Bool
}

var _ strategy.Locker = (*Redislock)(nil)

// NewRedislock builds a Redislock on a go-redis client of the server at
// addr (host:port), with cfg's TTL as the lock TTL. It does not dial: the
// client connects on first use. A bad cfg or an empty addr return an error
// wrapping ErrInvalidConfig.
func NewRedislock(addr string, cfg strategy.Config) (*Redislock, error) {
	retry := cfg.Retry
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(RedislockName, err)
	}
	cfg.Retry = retry
	if addr == "" {
		return nil, lockerr.New(RedislockName, fmt.Errorf("%w: empty addr", strategy.ErrInvalidConfig))
	}
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	return &Redislock{client: client, rl: redislock.New(client), cfg: cfg}, nil
}

// Properties claims what bsm/redislock's documentation promises. Its
// README: "Simplified distributed locking implementation using Redis
// (http://redis.io/topics/distlock)", whose single-instance lock is one SET
// NX PX (AtomicAcquire), released by a script that deletes only our value
// (OwnerSafeRelease; redislock's Release "May return ErrLockNotHeld") and
// needs no synchronized clocks (ClockSafe). One node: no fault tolerance; no
// fencing tokens.
func (l *Redislock) Properties() strategy.Properties {
	return strategy.Properties{
		Name:              RedislockName,
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
}

// Close closes the go-redis client; later calls return an error wrapping
// ErrClosed.
func (l *Redislock) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	return l.client.Close()
}

func (l *Redislock) check(key string) error {
	if l.closed.Load() {
		return lockerr.New(RedislockName, ErrClosed)
	}
	return checkKey(RedislockName, key)
}

// TryLock is one redislock Obtain with no retry. redislock's
// ErrNotObtained wraps to ErrNotAcquired; a failure to reach Redis comes
// back wrapped and does not match it.
func (l *Redislock) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	start := time.Now()
	lock, err := l.rl.Obtain(ctx, l.cfg.Prefix+key, l.cfg.TTL, nil)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return nil, lockerr.Op(RedislockName, "lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
	case err != nil:
		return nil, lockerr.Op(RedislockName, "lock", key, err)
	}
	return &redislockLease{l: l, key: key, lock: lock, deadline: start.Add(l.cfg.TTL)}, nil
}

// Lock repeats TryLock, waiting between attempts what a
// redislock.LinearBackoff(DefaultRedislockRetry) says (or Config.Retry),
// the loop redislock's Obtain runs, until it holds key or ctx ends; then
// the error wraps ErrNotAcquired and ctx's error. (Obtain's own loop stops
// at the TTL when ctx has no deadline, and its lock's start is unknown, so
// the adapter runs the loop to keep the Lease's Deadline exact.)
func (l *Redislock) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	retry := l.cfg.Retry
	if retry == nil {
		retry = backoff{redislock.LinearBackoff(DefaultRedislockRetry)}
	}
	return retryLoop(ctx, RedislockName, key, retry, func(ctx context.Context) (strategy.Lease, error) { return l.TryLock(ctx, key) })
}

// backoff is a redislock.RetryStrategy as a strategy.Retry: a backoff
// below 1 stops, as it stops Obtain.
type backoff struct{ s redislock.RetryStrategy }

func (b backoff) Backoff(int) (time.Duration, bool) {
	d := b.s.NextBackoff()
	return d, d >= 1
}

// redislockLease is one obtained redislock.Lock.
type redislockLease struct {
	l        *Redislock
	key      string
	lock     *redislock.Lock
	mu       sync.Mutex
	deadline time.Time
}

func (s *redislockLease) Key() string   { return s.key }
func (s *redislockLease) Token() string { return s.lock.Token() }
func (s *redislockLease) Fence() uint64 { return 0 }

// Deadline is the start of the successful attempt plus the TTL.
func (s *redislockLease) Deadline() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline
}

// Extend is redislock's Refresh; its ErrNotObtained (our value is gone)
// wraps to ErrNotHeld.
func (s *redislockLease) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl < 0 || (ttl > 0 && ttl < strategy.MinTTL) {
		return lockerr.Op(RedislockName, "extend", s.key, fmt.Errorf("%w: TTL %v", strategy.ErrInvalidConfig, ttl))
	}
	if ttl == 0 {
		ttl = s.l.cfg.TTL
	}
	start := time.Now()
	err := s.lock.Refresh(ctx, ttl, nil)
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return lockerr.Op(RedislockName, "extend", s.key, fmt.Errorf("%w: %w", strategy.ErrNotHeld, err))
	case err != nil:
		return lockerr.Op(RedislockName, "extend", s.key, err)
	}
	s.mu.Lock()
	s.deadline = start.Add(ttl)
	s.mu.Unlock()
	return nil
}

// Unlock is redislock's Release; its ErrLockNotHeld wraps to ErrNotHeld.
func (s *redislockLease) Unlock(ctx context.Context) error {
	err := s.lock.Release(ctx)
	switch {
	case errors.Is(err, redislock.ErrLockNotHeld):
		return lockerr.Op(RedislockName, "unlock", s.key, fmt.Errorf("%w: %w", strategy.ErrNotHeld, err))
	case err != nil:
		return lockerr.Op(RedislockName, "unlock", s.key, err)
	}
	return nil
}

package peers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncredigo "github.com/go-redsync/redsync/v4/redis/redigo"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// Redsync is go-redsync/redsync v4 over redigo pools as a strategy.Locker:
// on one pool, the single-instance lock of the Redis distributed-lock page;
// on N pools, Redlock with redsync's default quorum N/2+1.
type Redsync struct {
	rs     *redsync.Redsync
	cfg    strategy.Config
	nodes  int
	closed atomic.Bool
}

var _ strategy.Locker = (*Redsync)(nil)

// NewRedsync builds a Redsync over pools, one per independent Redis
// master, with cfg's TTL as the mutex expiry. A bad cfg, no pools or a nil
// pool return an error wrapping ErrInvalidConfig that names the problem.
func NewRedsync(pools []strategy.Pool, cfg strategy.Config) (*Redsync, error) {
	name := (&Redsync{nodes: len(pools)}).name()
	retry := cfg.Retry
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	cfg.Retry = retry // nil: redsync's own schedule
	if len(pools) == 0 {
		return nil, lockerr.New(name, fmt.Errorf("%w: no pools", strategy.ErrInvalidConfig))
	}
	rp := make([]redsyncredis.Pool, 0, len(pools))
	for i, p := range pools {
		if p == nil {
			return nil, lockerr.New(name, fmt.Errorf("%w: pool %d is nil", strategy.ErrInvalidConfig, i))
		}
		rp = append(rp, redsyncredigo.NewPool(deadlinePool{p}))
	}
	return &Redsync{rs: redsync.New(rp...), cfg: cfg, nodes: len(pools)}, nil
}

// Properties claims what redsync's documentation promises. Its README:
// "Redsync provides a Redis-based distributed mutual exclusion lock
// implementation for Go as described in this post" (redis.io/topics/distlock),
// and its doc.go: "as described in the post http://redis.io/topics/distlock".
// That page's single-instance lock sets the value and the expiry in one SET
// NX PX (AtomicAcquire) and releases with a script that deletes the key only
// if the value is ours (OwnerSafeRelease); it needs "no synchronized clock
// across the processes" (ClockSafe on one node). On N nodes it is Redlock,
// which holds while a minority of nodes fails (NodeFaultTolerant) but
// "relies on the assumption that ... the local time in every process updates
// at approximately at the same rate": a node whose clock jumps breaks it, so
// ClockSafe is not claimed there, as lockzoo's redlock does not claim it. The
// page states one instance with a replica loses the lock on failover, so a
// single node claims no fault tolerance. No fencing tokens.
func (l *Redsync) Properties() strategy.Properties {
	return strategy.Properties{
		Name:              l.name(),
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         l.nodes == 1,
		NodeFaultTolerant: l.nodes > 1,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
}

func (l *Redsync) name() string {
	if l.nodes == 1 {
		return RedsyncName
	}
	return RedsyncRedlockName
}

// Close marks the Locker closed; later calls return an error wrapping
// ErrClosed. The pools are the caller's and stay open.
func (l *Redsync) Close() error {
	l.closed.Store(true)
	return nil
}

func (l *Redsync) mutex(key string, ttl time.Duration, opts ...redsync.Option) *redsync.Mutex {
	return l.rs.NewMutex(l.cfg.Prefix+key, append([]redsync.Option{redsync.WithExpiry(ttl)}, opts...)...)
}

func (l *Redsync) check(key string) error {
	if l.closed.Load() {
		return lockerr.New(l.name(), ErrClosed)
	}
	return checkKey(l.name(), key)
}

// TryLock makes one redsync attempt (TryLockContext). If a quorum of nodes
// holds key for someone else the error wraps ErrNotAcquired; a failure to
// reach the nodes comes back wrapped and does not match it.
func (l *Redsync) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	m := l.mutex(key, l.cfg.TTL)
	if err := m.TryLockContext(ctx); err != nil {
		return nil, l.lockErr(key, err)
	}
	return &redsyncLease{l: l, key: key, m: m}, nil
}

// Lock waits under redsync's own retry (its default random 50-250 ms delay,
// for as many tries as ctx allows), or under Config.Retry when one is set,
// until it holds key or ctx ends; then the error wraps ErrNotAcquired and
// ctx's error.
func (l *Redsync) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	if l.cfg.Retry != nil {
		return retryLoop(ctx, l.name(), key, l.cfg.Retry, func(ctx context.Context) (strategy.Lease, error) { return l.TryLock(ctx, key) })
	}
	m := l.mutex(key, l.cfg.TTL, redsync.WithTries(math.MaxInt32))
	for {
		err := m.LockContext(ctx)
		if err == nil {
			return &redsyncLease{l: l, key: key, m: m}, nil
		}
		if ctx.Err() != nil {
			return nil, gaveUp(ctx, l.name(), key, nil)
		}
		// MaxInt32 tries ran out, or the last try failed to reach Redis:
		// start over, as redsync's doc says ("you may retry").
	}
}

// lockErr maps a failed acquire: a quorum taken (ErrTaken), or nodes taken
// with no node failing, or redsync's ErrFailed (quorum not reached in the
// validity) is ErrNotAcquired; anything with a node failure is that failure.
func (l *Redsync) lockErr(key string, err error) error {
	var taken *redsync.ErrTaken
	var redisErr *redsync.RedisError
	switch {
	case errors.As(err, &taken), errors.Is(err, redsync.ErrFailed):
		return lockerr.Op(l.name(), "lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
	case errors.As(err, &redisErr):
		return lockerr.Op(l.name(), "lock", key, err)
	}
	var nodeTaken *redsync.ErrNodeTaken
	if errors.As(err, &nodeTaken) {
		return lockerr.Op(l.name(), "lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
	}
	return lockerr.Op(l.name(), "lock", key, err)
}

// redsyncLease is one redsync Mutex that holds its lock.
type redsyncLease struct {
	l   *Redsync
	key string
	mu  sync.Mutex
	m   *redsync.Mutex // replaced by Extend with another TTL
}

func (s *redsyncLease) mutex() *redsync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

func (s *redsyncLease) Key() string   { return s.key }
func (s *redsyncLease) Token() string { return s.mutex().Value() }
func (s *redsyncLease) Fence() uint64 { return 0 }

// Deadline is redsync's Until: the expiry less the time the acquire took
// and the drift allowance.
func (s *redsyncLease) Deadline() time.Time { return s.mutex().Until() }

// Extend is redsync's ExtendContext. A ttl other than the mutex's expiry
// extends through a new Mutex that carries this lease's value (WithValue,
// redsync's documented way to hand a lock over). Not extended on a quorum:
// ErrNotHeld, unless a node failed to answer, then that failure.
func (s *redsyncLease) Extend(ctx context.Context, ttl time.Duration) error {
	if ttl < 0 || (ttl > 0 && ttl < strategy.MinTTL) {
		return lockerr.Op(s.l.name(), "extend", s.key, fmt.Errorf("%w: TTL %v", strategy.ErrInvalidConfig, ttl))
	}
	if ttl == 0 {
		ttl = s.l.cfg.TTL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	if ttl != s.l.cfg.TTL {
		m = s.l.mutex(s.key, ttl, redsync.WithValue(s.m.Value()))
	}
	ok, err := m.ExtendContext(ctx)
	if ok {
		s.m = m
		return nil
	}
	return s.l.heldErr("extend", s.key, err)
}

// Unlock is redsync's UnlockContext: released on a quorum, or ErrNotHeld
// when the nodes no longer had our value (redsync's ErrLockAlreadyExpired or
// a value that is someone else's), or the node failure that kept it from a
// quorum.
func (s *redsyncLease) Unlock(ctx context.Context) error {
	ok, err := s.mutex().UnlockContext(ctx)
	if ok {
		return nil
	}
	return s.l.heldErr("unlock", s.key, err)
}

// heldErr maps a failed Extend or Unlock: a node failure is itself;
// otherwise the lock was not ours on a quorum.
func (l *Redsync) heldErr(op, key string, err error) error {
	var redisErr *redsync.RedisError
	if errors.As(err, &redisErr) {
		return lockerr.Op(l.name(), op, key, err)
	}
	if err == nil {
		err = errors.New("not our value on a quorum of nodes")
	}
	return lockerr.Op(l.name(), op, key, fmt.Errorf("%w: %w", strategy.ErrNotHeld, err))
}

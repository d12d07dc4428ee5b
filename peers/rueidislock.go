package peers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// rueidisTryNextAfter is rueidislock's TryNextAfter default: the bound on
// one key's acquire, so also how much earlier than the Lease's return the
// key's expiry may have been computed.
const rueidisTryNextAfter = 20 * time.Millisecond

// rueidisNoExtend is the ExtendInterval the adapter gives rueidislock: longer
// than any TTL, so that a lease lives its TTL, like every other row's, and
// is not extended in the background (see Rueidislock).
const rueidisNoExtend = 100 * 365 * 24 * time.Hour

// Rueidislock is rueidislock (github.com/redis/rueidis) with KeyMajority 1,
// its one-Redis-instance set-up, as a strategy.Locker. It owns a rueidis
// client with client-side caching; waiters wake on the server's
// invalidation notices.
//
// rueidislock keeps a held lock alive in the background (every
// ExtendInterval) for as long as the process runs and the holder has not
// cancelled; a lockzoo Lease instead lives its TTL unless Extend is called,
// and the suite's "crashed" holder is a dropped Lease in a live process.
// So the adapter sets ExtendInterval beyond any TTL: the key expires at its
// TTL, rueidislock sees it go (its notice) and ends the lock. rueidislock has
// no call to extend a held lock, so Extend is ErrUnsupported.
//
// ctx does not bound everything: an acquire that failed to reach Redis
// returns only once rueidislock's clean-up of the key has given up, which
// its own deadline (now + TTL) bounds, not ctx; and Unlock's release runs on
// (see Unlock).
type Rueidislock struct {
	locker rueidislock.Locker
	cfg    strategy.Config
	closed atomic.Bool
}

var _ strategy.Locker = (*Rueidislock)(nil)

// NewRueidislock builds a Rueidislock on the server at addr (host:port)
// with cfg's TTL as KeyValidity and cfg's Prefix, less a trailing ':', as
// KeyPrefix (rueidislock adds ":<i>:<key>"). It dials at once, as
// rueidis.NewClient does; a failure to connect is returned wrapped. A bad
// cfg or an empty addr wrap ErrInvalidConfig.
func NewRueidislock(addr string, cfg strategy.Config) (*Rueidislock, error) {
	retry := cfg.Retry
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(RueidislockName, err)
	}
	cfg.Retry = retry
	if addr == "" {
		return nil, lockerr.New(RueidislockName, fmt.Errorf("%w: empty addr", strategy.ErrInvalidConfig))
	}
	prefix := strings.TrimSuffix(cfg.Prefix, ":")
	if prefix == "" {
		prefix = cfg.Prefix
	}
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{addr}},
		KeyPrefix:      prefix,
		KeyValidity:    cfg.TTL,
		ExtendInterval: rueidisNoExtend,
		KeyMajority:    1,
		// NoLoopTracking stays at its default (false); the README's
		// example turns it on for Redis >= 7.0.5 "to have better
		// performance". Either way a shared Locker can miss a wake-up (see
		// Findings).
	})
	if err != nil {
		return nil, lockerr.New(RueidislockName, fmt.Errorf("connect %s: %w", addr, err))
	}
	return &Rueidislock{locker: l, cfg: cfg}, nil
}

// Properties claims what rueidislock's documentation promises. Its README:
// "A Redis Distributed Lock Pattern enhanced by Client Side Caching", the
// redis.io pattern whose lock is one SET NX with an expiry (AtomicAcquire;
// "How it works": "by sending redis command SET NX PXAT") released only by
// its owner (OwnerSafeRelease). PXAT is an absolute time from the client's
// clock, so the lock's life depends on the client's and the server's clocks
// agreeing: ClockSafe is not claimed. "Use KeyMajority=1 if you have only
// one Redis instance": no fault tolerance. No fencing tokens.
func (l *Rueidislock) Properties() strategy.Properties {
	return strategy.Properties{
		Name:              RueidislockName,
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
}

// Close closes rueidislock's Locker and its client; waiting Locks end with
// an error wrapping ErrClosed, later calls too.
func (l *Rueidislock) Close() error {
	if !l.closed.Swap(true) {
		l.locker.Close()
	}
	return nil
}

func (l *Rueidislock) check(key string) error {
	if l.closed.Load() {
		return lockerr.New(RueidislockName, ErrClosed)
	}
	return checkKey(RueidislockName, key)
}

// TryLock is rueidislock's TryWithContext. Its ErrNotLocked wraps to
// ErrNotAcquired; a failure to reach Redis (ctx ending first among them)
// comes back wrapped and does not match it.
func (l *Rueidislock) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	return l.acquire(ctx, key, l.locker.TryWithContext, false)
}

// Lock is rueidislock's WithContext, which waits for the key's
// invalidation notice between attempts, until it holds key or ctx ends;
// then the error wraps ErrNotAcquired and ctx's error. Under a Config.Retry
// it repeats TryLock as that says instead.
func (l *Rueidislock) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.check(key); err != nil {
		return nil, err
	}
	if l.cfg.Retry != nil {
		return retryLoop(ctx, RueidislockName, key, l.cfg.Retry, func(ctx context.Context) (strategy.Lease, error) { return l.TryLock(ctx, key) })
	}
	return l.acquire(ctx, key, l.locker.WithContext, true)
}

type rueidisAcquire func(ctx context.Context, name string) (context.Context, context.CancelFunc, error)

// acquire runs one of rueidislock's acquires. rueidislock ties the lock to
// the context it is given (the lock goes when that ends, and its deadline
// shortens the lock); a lockzoo ctx bounds only the call. So the acquire
// gets a context of its own, without ctx's deadline, cancelled by ctx only
// until the call returns. waits says the acquire is Lock's: ctx ending is
// then giving up (ErrNotAcquired), not a failure.
func (l *Rueidislock) acquire(ctx context.Context, key string, acquire rueidisAcquire, waits bool) (strategy.Lease, error) {
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, end)
	held, release, err := acquire(life, key)
	stopped := stop()
	if err == nil && !stopped { // ctx ended as the lock came: it is going
		release()
		err = context.Cause(ctx)
	}
	if err != nil {
		end()
		switch {
		case waits && ctx.Err() != nil:
			return nil, gaveUp(ctx, RueidislockName, key, nil)
		case ctx.Err() != nil:
			return nil, lockerr.Op(RueidislockName, "lock", key, context.Cause(ctx))
		case errors.Is(err, rueidislock.ErrNotLocked):
			return nil, lockerr.Op(RueidislockName, "lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
		case errors.Is(err, rueidislock.ErrLockerClosed):
			return nil, lockerr.Op(RueidislockName, "lock", key, fmt.Errorf("%w: %w", ErrClosed, err))
		}
		return nil, lockerr.Op(RueidislockName, "lock", key, err)
	}
	return &rueidisLease{
		key:      key,
		held:     held,
		release:  func() { release(); end() },
		released: make(chan struct{}),
		deadline: time.Now().Add(l.cfg.TTL - rueidisTryNextAfter),
	}, nil
}

// rueidisLease is one rueidislock lock: its context ends when the lock is
// lost or released.
type rueidisLease struct {
	key      string
	held     context.Context
	release  func()
	deadline time.Time

	once     sync.Once
	released chan struct{} // closed when rueidislock's release returned
	lost     bool          // rueidislock had seen the lock go before the release; set in once
	reported atomic.Bool   // an Unlock has reported the release
}

func (s *rueidisLease) Key() string { return s.key }

// Token is "": rueidislock keeps its random value to itself.
func (s *rueidisLease) Token() string { return "" }
func (s *rueidisLease) Fence() uint64 { return 0 }

// Deadline is when the lease returned plus the TTL, less TryNextAfter (the
// bound on the acquire, so an earlier start of the key's expiry).
func (s *rueidisLease) Deadline() time.Time { return s.deadline }

// Extend is ErrUnsupported: rueidislock extends only in the background.
func (s *rueidisLease) Extend(context.Context, time.Duration) error {
	return lockerr.Op(RueidislockName, "extend", s.key, fmt.Errorf("%w: rueidislock has no call to extend a held lock", strategy.ErrUnsupported))
}

// Unlock is rueidislock's cancel: it deletes the key if the value is still
// ours. rueidislock's release takes no context, so it runs in a goroutine
// that ends when the release returns (at the latest when the Locker is
// closed), and Unlock waits for it until ctx ends; then it returns ctx's
// error and a later Unlock waits for the same release again. ErrNotHeld when
// rueidislock had already seen the lock go before the release (its context
// ended: the key expired or was deleted, or Redis went away), or when an
// Unlock reported the release already. rueidislock does not report a
// release that found someone else's value, so such a release returns nil.
func (s *rueidisLease) Unlock(ctx context.Context) error {
	s.once.Do(func() {
		s.lost = s.held.Err() != nil
		go func() {
			defer close(s.released)
			s.release()
		}()
	})
	select {
	case <-s.released:
	case <-ctx.Done():
		return lockerr.Op(RueidislockName, "unlock", s.key, context.Cause(ctx))
	}
	switch {
	case s.reported.Swap(true):
		return lockerr.Op(RueidislockName, "unlock", s.key, fmt.Errorf("%w: released already", strategy.ErrNotHeld))
	case s.lost:
		return lockerr.Op(RueidislockName, "unlock", s.key, fmt.Errorf("%w: rueidislock had seen the lock go (%v)", strategy.ErrNotHeld, context.Cause(s.held)))
	}
	return nil
}

package strategytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/fencing"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// tracedLocker records the calls made on a Locker, and the leases it
// grants, under the name of the client in each call's context.
type tracedLocker struct {
	l    strategy.Locker
	rec  *recorder
	ttl  time.Duration // the Locker's TTL, for the expiry events
	skew time.Duration // its clock minus the real one
}

var _ strategy.Locker = tracedLocker{}

// traced wraps l, built with cfg, to record into rec.
func traced(l strategy.Locker, rec *recorder, cfg strategy.Config) tracedLocker {
	t := tracedLocker{l: l, rec: rec, ttl: cfg.TTL}
	if t.ttl == 0 {
		t.ttl = strategy.DefaultTTL
	}
	if cfg.Clock != nil {
		t.skew = cfg.Clock().Sub(time.Now()).Round(time.Millisecond)
	}
	return t
}

func (t tracedLocker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return t.acquire(ctx, "TryLock", key, t.l.TryLock)
}

func (t tracedLocker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return t.acquire(ctx, "Lock", key, t.l.Lock)
}

func (t tracedLocker) Properties() strategy.Properties { return t.l.Properties() }

func (t tracedLocker) acquire(ctx context.Context, op, key string, f func(context.Context, string) (strategy.Lease, error)) (strategy.Lease, error) {
	returned := t.rec.call(ctx, op, key)
	lease, err := f(ctx, key)
	if err != nil {
		returned(outcome(err))
		return nil, err
	}
	at := returned(granted(lease))
	who := clientOf(ctx)
	if who == "" {
		return lease, nil
	}
	return tracedLease{Lease: lease, rec: t.rec, lr: t.rec.acquired(who, lease, at, t.ttl, t.skew)}, nil
}

// tracedLease records a lease's Unlock and Extend calls.
type tracedLease struct {
	strategy.Lease
	rec *recorder
	lr  *leaseRecord
}

func (l tracedLease) Unlock(ctx context.Context) error {
	l.rec.releasing(l.lr)
	returned := l.rec.call(ctx, "Unlock", l.Key())
	err := l.Lease.Unlock(ctx)
	returned(outcome(err))
	l.rec.released(l.lr)
	return err
}

func (l tracedLease) Extend(ctx context.Context, ttl time.Duration) error {
	returned := l.rec.call(ctx, "Extend", ttl.String())
	err := l.Lease.Extend(ctx, ttl)
	returned(outcome(err))
	return err
}

// granted describes a lease for an acquire's return: "a lease (token
// 3f2a8c1e…, fence 4)".
func granted(lease strategy.Lease) string {
	s := "a lease (token " + shortArg(lease.Token())
	if f := lease.Fence(); f > 0 {
		s += fmt.Sprintf(", fence %d", f)
	}
	return s + ")"
}

// outcome names a call's error by the sentinel it wraps, if any.
func outcome(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, fault.ErrCrashed):
		return "(the client crashed)"
	case errors.Is(err, strategy.ErrNotReplicated):
		return "ErrNotReplicated (the replicas did not acknowledge)"
	case errors.Is(err, strategy.ErrNotAcquired) && errors.Is(err, context.DeadlineExceeded):
		return "ErrNotAcquired (gave up waiting)"
	case errors.Is(err, strategy.ErrNotAcquired):
		return "ErrNotAcquired"
	case errors.Is(err, strategy.ErrNotHeld):
		return "ErrNotHeld"
	case errors.Is(err, strategy.ErrUnsupported):
		return "ErrUnsupported"
	case errors.Is(err, fencing.ErrStaleToken):
		return "ErrStaleToken (write refused)"
	}
	return "error: " + shorten(err.Error(), 60)
}

// record runs f as the call op(args) of the client ctx names (a resource
// write, say) and records it.
func (rec *recorder) record(ctx context.Context, op, args string, f func() error) error {
	returned := rec.call(ctx, op, args)
	err := f()
	returned(outcome(err))
	return err
}

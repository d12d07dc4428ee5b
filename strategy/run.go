package strategy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// RunReleaseTimeout bounds the release Run makes after fn returns, all its
// Unlock calls together. It runs on a fresh context, so a cancelled ctx
// still releases the lock.
const RunReleaseTimeout = 5 * time.Second

// RunReleaseAttempts is how many Unlock calls Run's release makes at most:
// an Unlock that fails with neither success nor ErrNotHeld (Redis
// unreachable for a moment, a reply lost) does not spend the lease, so Run
// calls it again, after RunReleaseBackoff, then twice that, while
// RunReleaseTimeout and the lease's Deadline allow.
const RunReleaseAttempts = 3

// RunReleaseBackoff is the wait before the second Unlock of Run's release.
const RunReleaseBackoff = 50 * time.Millisecond

// Run locks key with locker, runs fn while keeping the lock alive, and
// releases it.
//
// fn gets a context derived from ctx that is also cancelled when the lock
// is lost: when an extension reports the lock gone, or when the lease's
// Deadline arrives without a successful extension (Redis unreachable, or a
// technique that cannot extend). Then context.Cause of fn's context wraps
// ErrNotHeld; fn should stop touching the protected resource at once. The
// lease is extended by its own TTL every third of that TTL, the TTL being
// the validity the lease had when acquired (measured by the technique on
// the monotonic clock from before the acquire was sent). When fn returns,
// Run stops extending and calls Unlock with a fresh context bounded by
// RunReleaseTimeout, even if ctx was cancelled; an Unlock that fails
// transiently is retried (see RunReleaseAttempts).
//
// Run returns the error from Lock if the lock was not acquired (it wraps
// ErrNotAcquired); otherwise fn's error if it is not nil; otherwise the
// cause of the lock's loss (wrapping ErrNotHeld) if it was lost while fn
// ran; otherwise the last Unlock's error. The goroutine that extends the lease ends
// before Run returns.
func Run(ctx context.Context, locker Locker, key string, fn func(ctx context.Context) error) error {
	lease, err := locker.Lock(ctx, key)
	if err != nil {
		return err
	}
	work, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var lost error
	var wg sync.WaitGroup
	wg.Go(func() {
		lost = keepAlive(work, locker.Properties().Name, lease, stop)
		if lost != nil {
			cancel(lost)
		}
	})
	fnErr := fn(work)
	close(stop)
	wg.Wait()

	unlockErr := release(ctx, lease)
	switch {
	case fnErr != nil:
		return fnErr
	case lost != nil:
		return lost
	}
	return unlockErr
}

// release unlocks lease for Run on a fresh context bounded by
// RunReleaseTimeout (ctx gives only its values), retrying an Unlock that
// failed with neither success nor ErrNotHeld up to RunReleaseAttempts
// calls in all, with a doubling wait from RunReleaseBackoff, and not past
// the lease's Deadline (the lock has expired by then). It returns the
// last Unlock's error.
func release(ctx context.Context, lease Lease) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RunReleaseTimeout)
	defer cancel()
	wait := RunReleaseBackoff
	for attempt := 1; ; attempt++ {
		err := lease.Unlock(rctx)
		if err == nil || errors.Is(err, ErrNotHeld) || attempt == RunReleaseAttempts ||
			!time.Now().Add(wait).Before(lease.Deadline()) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-rctx.Done():
			t.Stop()
			return err
		}
		wait *= 2
	}
}

// keepAlive extends lease every third of its validity until stop closes,
// and returns an error wrapping ErrNotHeld when the lock is lost: the
// extension's own error when it says so, or a deadlineError of technique
// when the deadline passes unextended. It returns nil when stopped. ctx
// ending (the caller's cancellation) only stops it.
func keepAlive(ctx context.Context, technique string, lease Lease, stop <-chan struct{}) error {
	deadline := lease.Deadline()
	period := max(time.Until(deadline)/3, time.Millisecond)
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			<-stop
			return nil
		case <-expire.C:
			return &deadlineError{technique: technique, key: lease.Key()}
		case <-tick.C:
			// Bound the extension by the deadline: past it the lock is gone
			// whatever Redis answers.
			ext, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
			err := lease.Extend(ext, 0)
			cancel()
			switch {
			case err == nil:
				deadline = lease.Deadline()
				expire.Reset(time.Until(deadline))
			case errors.Is(err, ErrNotHeld):
				return err // it names the technique, the call and the key
			}
			// Other failures (Redis unreachable, ErrUnsupported) are retried
			// on the next tick until the deadline decides.
		}
	}
}

// deadlineError is Run's error for a lease whose Deadline passed without
// an extension. Like every error a caller gets from lockzoo, its text
// starts "lockzoo: <technique>: " once; it wraps ErrNotHeld.
type deadlineError struct{ technique, key string }

func (e *deadlineError) Error() string {
	return fmt.Sprintf("lockzoo: %s: run %q: %s: the lease's deadline passed without an extension",
		e.technique, e.key, strings.TrimPrefix(ErrNotHeld.Error(), "lockzoo: "))
}

func (e *deadlineError) Unwrap() error { return ErrNotHeld }

package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// WithoutAttemptBound is for a technique that bounds its own calls within
// an attempt (redlock: NodeTimeout per node), so Lock's attempts are not
// bounded by AttemptTimeout.
func WithoutAttemptBound() Option {
	return func(l *Locker) { l.noAttemptBound = true }
}

// WithoutTakeBack is for a technique whose acquire needs no take-back by
// the engine: its release checks no owner, so it could delete another
// holder's lock (getset_timestamp), or it takes back its own failed
// attempts (redlock releases every node that may hold one).
func WithoutTakeBack() Option {
	return func(l *Locker) { l.noTakeBack = true }
}

// Attempt bounds: each attempt inside Lock is bounded on its own by
// AttemptTimeout(TTL), so that an attempt whose reply is lost costs a
// fraction of the caller's ctx rather than all of it.
const (
	minAttemptTimeout = 50 * time.Millisecond
	maxAttemptTimeout = 250 * time.Millisecond
)

// AttemptTimeout is how long one attempt of Lock may take: a tenth of the
// lock's TTL, within 50..250 ms. The caller's ctx bounds it too.
func AttemptTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, minAttemptTimeout), maxAttemptTimeout)
}

// boundAttempt returns ctx bounded by AttemptTimeout(ttl), and the
// function that releases its resources. The bound is a deadline without a
// timer (deadlineCtx), honoured through the connections' read deadlines
// (DoContext, EvalOn), so that an attempt pays no timer for it: a Lock's
// attempt costs no more allocations than a TryLock's.
func boundAttempt(ctx context.Context, ttl time.Duration) (context.Context, context.CancelFunc) {
	return deadlineCtx{ctx, time.Now().Add(AttemptTimeout(ttl))}, func() {}
}

// deadlineCtx is ctx with a deadline of its own, without a timer: Done is
// ctx's (nil for a ctx that can never end), so it does not close at the
// deadline; Deadline is the earlier of the two, and Err reports
// context.DeadlineExceeded once it passed. Only the engine's own calls
// (DoContext, EvalOn, Conn) and the technique's, which go through them,
// see it, and they bound each command by the deadline: redigo's DoContext
// and DoWithTimeout both read it as the connection's read deadline.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c deadlineCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// outcomeUnknown reports whether an acquire attempt that failed with err
// may nonetheless have written its token: any failure but a refusal, a bad
// input, an injected crash (a client that "died" takes nothing back) or a
// closed Locker. A timeout or a lost connection after the command was sent
// leaves the lock set with nobody to release it.
func outcomeUnknown(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, strategy.ErrNotAcquired),
		errors.Is(err, strategy.ErrInvalidConfig),
		errors.Is(err, strategy.ErrClosed),
		errors.Is(err, fault.ErrCrashed):
		return false
	}
	return true
}

// takeBack releases, in the background (releaseInBackground), what the
// attempt a may have written, with the technique's owner-checked release
// of a's own token (ctx may have ended: that is often why the outcome is
// unknown). A release that finds nothing of a's does nothing. It is tried
// until it reaches Redis, for up to a's TTL, after which what a wrote has
// expired.
func (l *Locker) takeBack(a Attempt) {
	if l.noTakeBack {
		return
	}
	l.releaseInBackground(Held{Key: a.Key, Value: a.Token}, a.TTL)
}

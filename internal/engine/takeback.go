package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/redisconn"
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

// boundAttempt returns ctx bounded by AttemptTimeout(ttl) plus replicas,
// the time the attempt may wait for the replicas' acknowledgement
// (WithReplicas); call its Cancel when the attempt is done. The bound
// starts no timer unless a Pool waits on its Done (redisconn.Bounded):
// the commands read it as the connections' read deadline, so that a
// Lock's attempt costs no more allocations than a TryLock's.
func boundAttempt(ctx context.Context, ttl, replicas time.Duration) *redisconn.Bounded {
	return redisconn.WithDeadline(ctx, time.Now().Add(AttemptTimeout(ttl)+replicas))
}

// outcomeUnknown reports whether an acquire attempt that failed with err
// may nonetheless have written its token: any failure but a refusal (the
// lock is held, or the pool's connection refused the command:
// redisconn.Refusal, a Redis Cluster's CLUSTERDOWN, say), a bad input, an
// injected crash (a client that "died" takes nothing back) or a closed
// Locker. A timeout or a lost connection after the command was sent
// leaves the lock set with nobody to release it.
func outcomeUnknown(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, strategy.ErrNotAcquired),
		errors.Is(err, strategy.ErrInvalidConfig),
		errors.Is(err, strategy.ErrClosed),
		errors.Is(err, fault.ErrCrashed),
		redisconn.IsRefusal(err):
		return false
	}
	return true
}

// takeBack releases, in the background (line.Line.ReleaseInBackground), what the
// attempt a may have written, with the technique's owner-checked release
// of a's own token (ctx may have ended: that is often why the outcome is
// unknown). A release that finds nothing of a's does nothing. It is tried
// until it reaches Redis, for up to a's TTL, after which what a wrote has
// expired.
func (l *Locker) takeBack(a Attempt) {
	if l.noTakeBack {
		return
	}
	l.line.ReleaseInBackground(Held{Key: a.Key, Value: a.Token}, a.TTL)
}

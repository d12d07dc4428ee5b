package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// TryLock makes one attempt to acquire key; see strategy.Locker.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.checkKey("trylock", key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // an ended ctx takes no connection
		return nil, l.opError("trylock", key, err)
	}
	token, err := l.token()
	if err != nil {
		return nil, l.opError("trylock", key, err)
	}
	now := time.Now()
	lease, err := l.attempt(ctx, key, Attempt{Key: l.rkey(key), Token: token, Waiter: token, TTL: l.cfg.TTL, Arrived: now}, now)
	if l.cfg.Observer != nil {
		l.observeTry(ctx, key, now, lease, err)
	}
	if err != nil {
		return nil, l.opError("trylock", key, err)
	}
	return lease, nil
}

// Lock retries TryLock under the Config's Retry policy until it holds key or
// ctx ends; see strategy.Locker. A Redis failure is retried like a held
// lock; an invalid key or an injected crash returns at once. After Close it
// returns an error wrapping strategy.ErrClosed without touching Redis, and
// a Lock that Close interrupts gives up with an error wrapping both
// strategy.ErrNotAcquired and strategy.ErrClosed.
//
// Waiting: this Locker's goroutines that wait for the same key queue in
// FIFO order and only the first contends in Redis. It retries when a release
// notice arrives (a local Unlock, or a pub/sub notice where the technique
// publishes one), when the Retry policy's wait ends (with WithNoticeWaits,
// once it listens for notices: the line's keep-place bound instead), or,
// where the technique reports the holder's remaining TTL, when that runs
// out, whichever comes first. It returns without another attempt when the
// lock is handed off to it: by a release in Redis (a "handoff:" notice), or
// by a local Unlock that took the lock for it (line.HandOffer).
func (l *Locker) Lock(ctx context.Context, key string) (lease strategy.Lease, err error) {
	if err := l.checkKey("lock", key); err != nil {
		return nil, err
	}
	name, err := l.token() // names this call in lines and notices
	if err != nil {
		return nil, l.opError("lock", key, err)
	}
	rkey := l.rkey(key)
	s := &waitState{key: key}
	w := l.line.Join(Attempt{Key: rkey, Waiter: name, TTL: l.cfg.TTL, Waits: true, Arrived: time.Now()})
	if l.cfg.Observer != nil { // after leave: the line is cleaned up first
		defer func() { l.observeLock(ctx, w, s, lease, err) }()
	}
	defer l.leave(ctx, w, s)
	var tick <-chan time.Time // nil until the first wait is armed
	for {
		select {
		case e := <-w.Events():
			h, taken, try := s.at.Heard(w, e)
			if taken {
				return l.handedOff(ctx, s.key, rkey, h)
			}
			if !try {
				continue
			}
		case <-tick:
		case <-ctx.Done():
			return nil, l.gaveUp(key, ctx.Err(), s.lastFailure)
		case <-l.line.Closed():
			return nil, l.gaveUp(key, strategy.ErrClosed, s.lastFailure)
		}
		if l.isClosed() { // the select may have picked another ready case
			return nil, l.gaveUp(key, strategy.ErrClosed, s.lastFailure)
		}
		lease, wait, err := l.tryOnce(ctx, w, s)
		if lease != nil || err != nil {
			return lease, err
		}
		if s.timer == nil {
			s.timer = time.NewTimer(wait) // stopped by leave
		} else {
			s.timer.Reset(wait) // Go 1.23+: no stale tick survives
		}
		tick = s.timer.C
	}
}

// waitState is what a Lock call keeps between its attempts; its attempt
// is its line.Waiter's.
type waitState struct {
	key         string     // as the caller named it
	at          line.Place // its place in the line in Redis
	lastFailure error      // the last error that was not "held by someone else"
	timer       *time.Timer
}

// tryOnce makes w's next attempt. It returns the lease on success, the
// final error when Lock must return, or else how long to wait before the
// next attempt (0: at once).
func (l *Locker) tryOnce(ctx context.Context, w *line.Waiter, s *waitState) (_ strategy.Lease, wait time.Duration, err error) {
	// A token of its own for every attempt, so that clean-up of an earlier
	// attempt's late writes can never touch this one's.
	a := w.Try()
	sent := time.Now()
	dead := ctx.Err() != nil // the attempt sends nothing
	lease, err := l.attempt(ctx, s.key, a, sent)
	refused := errors.Is(err, strategy.ErrNotAcquired)
	switch {
	case err == nil:
		won := ""
		if ls, ok := lease.(*Lease); ok {
			won = ls.value
		}
		s.at.Took(won)
		return lease, 0, nil
	case errors.Is(err, fault.ErrCrashed):
		s.at.Died()
		return nil, 0, l.opError("lock", s.key, err)
	case errors.Is(err, strategy.ErrInvalidConfig):
		return nil, 0, l.opError("lock", s.key, err)
	case errors.Is(err, strategy.ErrNotReplicated):
		// The technique took the lock back; the replicas did not keep up
		// within ReplicaTimeout (WithReplicas). The waiter may still be in
		// a line (an earlier refusal): leave takes it out.
		return nil, 0, l.opError("lock", s.key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
	case refused:
	case ctx.Err() == nil || !errors.Is(err, ctx.Err()) || s.lastFailure == nil:
		// Keep the last real failure: an attempt cut short by ctx says only
		// that ctx ended, which the final error reports anyway.
		s.lastFailure = err
	}
	var busy *BusyError
	isBusy := errors.As(err, &busy)
	o := line.Outcome{Try: a.Try, Sent: sent, Refused: refused,
		MayHaveRun: !dead && outcomeUnknown(err) && !errors.Is(err, redisconn.ErrNotSent)}
	if isBusy && busy.Counted {
		o.Counter, o.Counted = busy.Counter, true
	}
	s.at.Tried(o)
	if ctx.Err() != nil {
		return nil, 0, l.gaveUp(s.key, ctx.Err(), s.lastFailure)
	}
	if l.line.Subscribe(ctx, a.Key) {
		return nil, 0, nil // subscribed just now: a release may have slipped in between
	}
	wait, ok := l.cfg.Retry.Backoff(int(a.Try))
	if !ok {
		return nil, 0, l.gaveUp(s.key, nil, s.lastFailure)
	}
	wait = l.line.Wait(a.Key, wait, refused, isBusy && busy.Listened)
	if isBusy && busy.Remaining > 0 {
		wait = min(wait, busy.Remaining)
	}
	return nil, wait, nil
}

// leave ends w's wait: its timer, and its place in the line
// (line.Line.Leave, which cleans up what it left in Redis).
func (l *Locker) leave(ctx context.Context, w *line.Waiter, s *waitState) {
	if s.timer != nil {
		s.timer.Stop()
	}
	l.line.Leave(ctx, w, &s.at)
}

// handedOff wraps in a Lease a lock of key (rkey in Redis) handed off to
// the waiter, with the validity the line counted (line.Place.Heard).
func (l *Locker) handedOff(ctx context.Context, key, rkey string, h line.Handed) (strategy.Lease, error) {
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, l.opError("lock", key, err)
	}
	return newLease(l, key, rkey, h.Value, h.Start, Acquired{Value: h.Value, Fence: h.Fence, Validity: h.Validity}), nil
}

// gaveUp builds Lock's final error: it wraps ErrNotAcquired, why it gave up
// (the context's error, or ErrClosed) when there is a reason, and the last
// Redis failure when there was one.
func (l *Locker) gaveUp(key string, why, lastFailure error) error {
	switch {
	case why != nil && lastFailure != nil:
		return l.opError("lock", key, fmt.Errorf("%w: %w (last failure: %w)", strategy.ErrNotAcquired, why, lastFailure))
	case why != nil:
		return l.opError("lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, why))
	case lastFailure != nil:
		return l.opError("lock", key, fmt.Errorf("%w: retries exhausted (last failure: %w)", strategy.ErrNotAcquired, lastFailure))
	default:
		return l.opError("lock", key, fmt.Errorf("%w: retries exhausted", strategy.ErrNotAcquired))
	}
}

// attempt makes one acquire attempt, sent at start, and wraps a success in
// a Lease. A ctx that has already ended returns its error before the
// technique is called, so nothing is sent. An attempt of Lock (a.Waits) is
// bounded by AttemptTimeout too. When the attempt fails in a way that may
// still have written its token (outcomeUnknown), it is taken back
// (takeBack).
func (l *Locker) attempt(ctx context.Context, key string, a Attempt, start time.Time) (strategy.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acquire: %w", err)
	}
	if a.Waits && !l.noAttemptBound {
		bounded := boundAttempt(ctx, a.TTL, l.replicaWait())
		defer bounded.Cancel()
		ctx = bounded
	}
	g, err := l.tech.Acquire(ctx, a)
	if err != nil {
		if outcomeUnknown(err) {
			l.takeBack(a)
		}
		return nil, err
	}
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, err
	}
	return newLease(l, key, a.Key, a.Token, start, g), nil
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

// checkKey rejects the call op that must not reach Redis: an empty key
// (strategy.ErrInvalidConfig), or any call after Close
// (strategy.ErrClosed).
func (l *Locker) checkKey(op, key string) error {
	if key == "" {
		return l.opError(op, key, fmt.Errorf("%w: empty key", strategy.ErrInvalidConfig))
	}
	if l.isClosed() {
		return l.opError(op, key, strategy.ErrClosed)
	}
	return nil
}

// rkey returns the Redis key of the lock the caller names key.
func (l *Locker) rkey(key string) string {
	if l.lockKey != nil {
		return l.lockKey(l.cfg.Prefix, key)
	}
	return l.cfg.Prefix + key
}

// token returns a new name for a TryLock or Lock call, unique whatever
// Config.Token returns: a random UUIDv4 without a Config.Token, else
// Config.Token's value + "." + 26 random characters (crypto/rand.Text, 128
// bits), so that two Lockers whose Token returns the same string (a host
// name) never write the same value, and a technique that compares a lock's
// value with a waiter's name never mistakes one caller for another.
func (l *Locker) token() (string, error) {
	if l.cfg.Token != nil {
		t := l.cfg.Token()
		if t == "" {
			return "", fmt.Errorf("%w: Token returned an empty string", strategy.ErrInvalidConfig)
		}
		return t + "." + rand.Text(), nil
	}
	return newUUID(), nil
}

// newUUID returns a random (version 4) UUID in its string form. It fills
// the UUID with crypto/rand.Read, whose buffer stays on the stack, where
// uuid.NewRandom's reader puts it on the heap: one allocation, the
// string, on every Lock and TryLock.
func newUUID() string {
	var u uuid.UUID
	rand.Read(u[:])             // never fails (crypto/rand, Go 1.24+)
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // the RFC 4122 variant
	return u.String()
}

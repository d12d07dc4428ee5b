package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

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
// by a local Unlock that took the lock for it (HandOffer).
func (l *Locker) Lock(ctx context.Context, key string) (lease strategy.Lease, err error) {
	if err := l.checkKey("lock", key); err != nil {
		return nil, err
	}
	name, err := l.token() // names this call in lines and notices
	if err != nil {
		return nil, l.opError("lock", key, err)
	}
	rkey := l.rkey(key)
	w := l.lines.join(rkey, name, Attempt{Key: rkey, Waiter: name, TTL: l.cfg.TTL, Waits: true, Locker: l.id, Arrived: time.Now()})
	s := &waitState{key: key, a: w.next}
	if l.cfg.Observer != nil { // after leave: the line is cleaned up first
		defer func() { l.observeLock(ctx, w, s, lease, err) }()
	}
	defer l.leave(ctx, w, s)
	var tick <-chan time.Time // nil until the first wait is armed
	for {
		select {
		case e := <-w.events:
			if e.handedOff && e.off.start.IsZero() && s.refusedTry > e.tries {
				// An attempt begun after this hand-off reached the waiter
				// found the lock not the waiter's: the handed lock is gone
				// (it expired), and validity counted from that attempt
				// would outlast it.
				continue
			}
			staleQuorum := e.handedOff && e.off.try > 0 && w.tries.Load() > e.off.try
			// A hand-off the replicas must acknowledge first is confirmed
			// by an attempt of the waiter's own (WithReplicas).
			if e.handedOff && !staleQuorum && !l.unconfirmed(e.off) {
				s.queued, s.mayBeQueued = false, false // the hand-off took the waiter out of the line
				return l.handedOff(ctx, s, e.off)
			}
			// A quorum hand-off that an attempt begun since took or found
			// gone is dropped, and the waiter attempts at once (stale is
			// false for a hand-off): the hand-off may have kept a "try
			// now" out (send).
			if e.stale(w) {
				continue
			}
		case <-tick:
		case <-ctx.Done():
			return nil, l.gaveUp(key, ctx.Err(), s.lastFailure)
		case <-l.closed:
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

// waitState is what a Lock call keeps between its attempts.
type waitState struct {
	key        string  // as the caller named it
	a          Attempt // the next attempt; Token set per attempt
	refusedTry uint64  // the number of the last attempt refused
	refusedAt  time.Time
	// refusedCounter is the fencing counter the refusal at refusedAt
	// reported, if refusedCounted (BusyError.Counter).
	refusedCounter int64
	refusedCounted bool
	// inLineSince is when the earliest attempt that may have put the
	// waiter in a technique's line in Redis was sent (one refused, or one
	// whose outcome is unknown); zero while none was. A release hands the
	// waiter the lock only after such an attempt ran, so validity counted
	// from here is safe (handedOff).
	inLineSince time.Time
	queued      bool // an attempt was refused, so the technique may have queued the waiter
	// mayBeQueued: an attempt may have run without its reply (it is taken
	// back), and its refusal may have queued the waiter.
	mayBeQueued bool
	lastFailure error // the last error that was not "held by someone else"
	// won is the value of the lock the waiter's own attempt took: a
	// local hand-off of that same lock (in the waiter's name, which the
	// technique's acquire answers with too) is the waiter's lease, not a
	// lock to release when it leaves.
	won   string
	timer *time.Timer
	// handOff: the lock was handed off to the waiter, by a local Unlock
	// (handOffLocal) or a release in Redis; for the Observer.
	handOff, handOffLocal bool
}

// tryOnce makes w's next attempt. It returns the lease on success, the
// final error when Lock must return, or else how long to wait before the
// next attempt (0: at once).
func (l *Locker) tryOnce(ctx context.Context, w *waiter, s *waitState) (_ strategy.Lease, wait time.Duration, err error) {
	n := int(w.tries.Add(1))
	// A token of its own for every attempt, so that clean-up of an earlier
	// attempt's late writes can never touch this one's.
	if s.a.Token, err = l.attemptToken(s.a.Waiter, n); err != nil {
		return nil, 0, l.opError("lock", s.key, err)
	}
	sent := time.Now()
	dead := ctx.Err() != nil // the attempt sends nothing
	lease, err := l.attempt(ctx, s.key, s.a, sent)
	refused := errors.Is(err, strategy.ErrNotAcquired)
	switch {
	case err == nil:
		s.queued, s.mayBeQueued = false, false // the technique took the waiter out of its line
		if ls, ok := lease.(*Lease); ok {
			s.won = ls.value
		}
		return lease, 0, nil
	case errors.Is(err, fault.ErrCrashed):
		s.queued, s.mayBeQueued = false, false // a client that died leaves its line entry to go stale
		return nil, 0, l.opError("lock", s.key, err)
	case errors.Is(err, strategy.ErrInvalidConfig):
		return nil, 0, l.opError("lock", s.key, err)
	case errors.Is(err, strategy.ErrNotReplicated):
		// The technique took the lock back; the replicas did not keep up
		// within ReplicaTimeout (WithReplicas). The waiter may still be in
		// a line (an earlier refusal): leave takes it out.
		return nil, 0, l.opError("lock", s.key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, err))
	case refused:
		s.queued, s.refusedTry, s.refusedAt = true, uint64(n), sent
		var busy *BusyError
		s.refusedCounted = errors.As(err, &busy) && busy.Counted
		if s.refusedCounted {
			s.refusedCounter = busy.Counter
		}
	case ctx.Err() == nil || !errors.Is(err, ctx.Err()) || s.lastFailure == nil:
		// Keep the last real failure: an attempt cut short by ctx says only
		// that ctx ended, which the final error reports anyway.
		s.lastFailure = err
	}
	mayHaveRun := !dead && outcomeUnknown(err) && !errors.Is(err, redisconn.ErrNotSent)
	if (refused || mayHaveRun) && s.inLineSince.IsZero() {
		s.inLineSince = sent
	}
	if !refused && mayHaveRun {
		// The attempt may have run and been refused, which queued the
		// waiter (attempt takes back a lock it may have taken): a Lock
		// that gives up leaves the line then too (leave). So for a
		// technique that takes back its own attempts (redlock): a round
		// that failed for want of answers may have been refused, and so
		// queued the waiter, on the nodes that did answer.
		s.mayBeQueued = true
	}
	if ctx.Err() != nil {
		return nil, 0, l.gaveUp(s.key, ctx.Err(), s.lastFailure)
	}
	if l.subscribe(ctx, s.a.Key) {
		return nil, 0, nil // subscribed just now: a release may have slipped in between
	}
	wait, ok := l.cfg.Retry.Backoff(n)
	if !ok {
		return nil, 0, l.gaveUp(s.key, nil, s.lastFailure)
	}
	keep := l.keepPlace
	busy := (*BusyError)(nil)
	isBusy := errors.As(err, &busy)
	if refused && l.sleeps(s.a.Key) {
		if isBusy && busy.Listened && l.keepListened > 0 {
			keep = l.keepListened // the line saw it listening (WithListened)
		}
		wait = keep // a notice or a hand-off wakes it sooner
	}
	if isBusy && busy.Remaining > 0 {
		wait = min(wait, busy.Remaining)
	}
	if keep > 0 && refused {
		wait = min(wait, keep)
	}
	return nil, wait, nil
}

// sleeps reports whether a refused waiter for rkey may sleep until a
// notice, the holder's TTL or keepPlace (WithNoticeWaits): its line's
// subscription is confirmed and its connection is up.
func (l *Locker) sleeps(rkey string) bool {
	return l.noticeWaits && l.keepPlace > 0 && l.hub != nil && l.hub.Listening(l.channel(rkey))
}

// subscribeBound caps how long a waiter waits for its subscription to be
// confirmed before it relies on its timer alone.
const subscribeBound = 50 * time.Millisecond

// subscribe makes sure rkey's line listens for release notices; it reports
// whether it subscribed just now (after waiting, within subscribeBound and
// ctx, for the confirmation), in which case a notice may have been missed
// before. A subscription that was still confirmed from an earlier wait
// (see notify.Linger) missed nothing.
func (l *Locker) subscribe(ctx context.Context, rkey string) bool {
	if l.hub == nil || !l.lines.markSubscribed(rkey) {
		return false
	}
	confirmed := l.hub.Subscribe(l.channel(rkey))
	select {
	case <-confirmed:
		return false
	default:
	}
	t := time.NewTimer(subscribeBound)
	defer t.Stop()
	select {
	case <-confirmed:
	case <-t.C:
	case <-ctx.Done():
	case <-l.closed:
	}
	return true
}

// leave ends w's wait: when it gave up after a refused attempt, the
// technique takes it out of its line in Redis (Abandon, which also passes
// on a lock a release in Redis handed off to it meanwhile), and the Locker
// remembers it for a while (departed), in case that Abandon did not reach
// Redis and a release hands it the lock later (passOn); then w leaves
// the key's local line, which drops the line's subscription when it was
// the last, and a lock handed off to w without w taking it (by a local
// Unlock, or by a release in Redis after w gave up) is released, on a
// fresh context bounded by cleanupTimeout. An Abandon or a release that
// does not reach Redis (a fault) is tried again in the background until
// it does (abandonLater, releaseOrRetry), so that what w left behind does
// not hold the key after the fault heals.
func (l *Locker) leave(ctx context.Context, w *waiter, s *waitState) {
	if s.timer != nil {
		s.timer.Stop()
	}
	switch {
	case s.queued:
		abandoned := l.abandon(ctx, s.a)
		// Before it leaves the local line: a hand-off notice that comes
		// after finds it here (passOn), one before reaches w.
		l.departed.add(s.a.Key, s.a.Waiter, time.Now())
		if !abandoned {
			l.abandonLater(s.a) // keep trying: see abandonLater
		}
	case s.mayBeQueued:
		// Only an attempt that lost its reply may have queued it, and its
		// node may be frozen: Lock does not wait for the Abandon, and a
		// hand-off notice that comes meanwhile finds it departed.
		l.departed.add(s.a.Key, s.a.Waiter, time.Now())
		l.abandonLater(s.a)
	}
	off, handedOff, unsubscribe := l.lines.leave(s.a.Key, w, s.won)
	if l.quorum != nil {
		l.quorum.LockEnded(s.a.Key, s.a.Waiter)
	}
	if unsubscribe && l.hub != nil {
		l.hub.Unsubscribe(l.channel(s.a.Key))
	}
	// A lock handed to w that w did not take: by a local Unlock, or by a
	// release in Redis after w's Abandon (which passes on what came
	// before it, but may have failed). w gave up, so the lock is nobody's.
	if handedOff && (off.local || s.queued || s.mayBeQueued) && off.value != s.won {
		l.releaseOrRetry(ctx, Held{Key: s.a.Key, Value: off.value, Fence: off.fence})
	}
}

// cleanupTimeout bounds each try of the clean-up the engine does on a
// fresh context: a Lock that gives up (Abandon, releasing a lock handed
// off to it), and the take-back of an attempt whose outcome is unknown
// (takeBack); see cleanUpInBackground for the tries after the first.
const cleanupTimeout = time.Second

// abandon tells a technique that keeps a line of waiters in Redis that the
// waiter a has given up, on a fresh context bounded by cleanupTimeout (ctx
// may have ended), and reports whether that reached Redis (true, too, for
// a technique without a line).
func (l *Locker) abandon(ctx context.Context, a Attempt) bool {
	ab, ok := l.tech.(Abandoner)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return reachedRedis(ab.Abandon(ctx, a))
}

// abandonLater is abandon in the background (cleanUpInBackground), tried
// until it reaches Redis, for up to a's TTL plus the departed horizon: by
// then the waiter's place in the line has gone stale, and a lock a release
// handed to it meanwhile (which the Abandon passes on) has expired. A
// waiter that gave up during a fault so leaves the line, and passes on a
// lock handed to it, once the fault heals, even when the hand-off's notice
// was lost; its place would otherwise hold a free lock back, and such a
// lock stay held, until they expire.
func (l *Locker) abandonLater(a Attempt) {
	ab, ok := l.tech.(Abandoner)
	if !ok {
		return
	}
	l.cleanUpInBackground(a.TTL+l.departed.horizon, func(ctx context.Context) bool {
		return reachedRedis(ab.Abandon(ctx, a))
	})
}

// handedOff wraps in a Lease a lock handed off to the waiter of s. A lock
// handed off by a release in Redis (a "handoff:" notice) holds the waiter's
// name; the release came after an attempt put the waiter in the line, so
// the validity is counted from the send time of the earliest attempt that
// may have done so (inLineSince: refused, or its outcome unknown), and
// never from before the Lock call began; or, when the hand-off's fencing
// token is above the counter the last refusal found (BusyError.Counter),
// from that refusal's attempt, which the hand-off came after: a waiter
// that waited longer than its TTL does not get a lease that expired
// before it was handed over. "Refused at" alone is not a bound: a notice
// delayed past the handed lock's expiry would reach a waiter whose later
// attempt was refused. (Lock drops a hand-off that an
// attempt begun after it arrived found gone: that attempt came after the
// hand-off.) A lock handed off by a local Unlock, or by a quorum of nodes,
// comes with its own start and validity.
func (l *Locker) handedOff(ctx context.Context, s *waitState, h handoff) (strategy.Lease, error) {
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, l.opError("lock", s.key, err)
	}
	s.handOff, s.handOffLocal = true, h.local
	start := h.start
	if start.IsZero() {
		start = s.inLineSince
		if s.refusedCounted && h.fence <= math.MaxInt64 && int64(h.fence) > s.refusedCounter && s.refusedAt.After(start) {
			// The hand-off's token is above the counter the last refusal
			// found: it came after that refusal.
			start = s.refusedAt
		}
	}
	if start.IsZero() || start.Before(s.a.Arrived) {
		start = s.a.Arrived // no attempt ran that could have queued it: the bound is the call's start
	}
	return newLease(l, s.key, s.a.Key, h.value, start, Acquired{Value: h.value, Fence: h.fence, Validity: h.valid}), nil
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

package line

import (
	"context"
	"time"
)

// Place is what a Lock call knows of its place in the line in Redis
// (Tried, Heard, Leave). Only the call's own goroutine touches it, so it
// lives apart from the Waiter, which other goroutines reach, and may stay
// on that goroutine's stack.
type Place struct {
	refusedTry uint64 // the number of the last attempt refused
	refusedAt  time.Time
	// refusedCounter is the fencing counter the refusal at refusedAt
	// reported, if refusedCounted (Outcome.Counter).
	refusedCounter int64
	// inLineSince is when the earliest attempt that may have put the
	// waiter in a technique's line in Redis was sent (one refused, or one
	// whose outcome is unknown); zero while none was. A release hands the
	// waiter the lock only after such an attempt ran, so validity counted
	// from here is safe (take).
	inLineSince time.Time
	// won is the value of the lock the waiter's own attempt took: a
	// local hand-off of that same lock (in the waiter's name, which the
	// technique's acquire answers with too) is the waiter's lease, not a
	// lock to release when it leaves.
	won            string
	refusedCounted bool
	queued         bool // an attempt was refused, so the technique may have queued the waiter
	// mayBeQueued: an attempt may have run without its reply (it is taken
	// back), and its refusal may have queued the waiter.
	mayBeQueued bool
	// handOff: the lock was handed off to the waiter, by a local Unlock
	// (handOffLocal) or a release in Redis; for the Observer.
	handOff, handOffLocal bool
}

// Outcome is what one attempt of a waiter's own told of its place in
// the line in Redis, for Tried.
type Outcome struct {
	Try  uint64    // the attempt's number (Attempt.Try)
	Sent time.Time // when it was sent
	// Refused: the key was held; the technique may have queued the
	// waiter. Counter is the fencing counter the refusal found, when
	// Counted (engine.BusyError.Counter).
	Refused bool
	Counter int64
	Counted bool
	// MayHaveRun: it failed after it may have run (its reply lost), so
	// its refusal may have queued the waiter.
	MayHaveRun bool
}

// Join puts a Lock call in the local line of a.Key; a is its attempt
// without a token (Try numbers each), whose Locker is set to the line's
// ID. It is the head, told to try at once, when nobody else waits. The
// caller must Leave.
func (l *Line) Join(a Attempt) *Waiter {
	a.Locker = l.id
	return l.q.join(a.Key, a.Waiter, a)
}

// Events is where w hears from its line: read each with Heard.
func (w *Waiter) Events() <-chan event { return w.events }

// Try returns w's next attempt of its own, numbered (Attempt.SetTry).
func (w *Waiter) Try() Attempt {
	a := w.next
	a.SetTry(w.tries.Add(1))
	return a
}

// Name returns the name of w's Lock call (Attempt.Waiter).
func (w *Waiter) Name() string { return w.next.Waiter }

// Arrived returns when w's Lock call began (Attempt.Arrived).
func (w *Waiter) Arrived() time.Time { return w.next.Arrived }

// Tries returns how many attempts of its own w made.
func (w *Waiter) Tries() int { return int(w.tries.Load()) }

// HandedOff reports whether the lock was handed to the waiter, and
// whether by a local Unlock.
func (p *Place) HandedOff() (handedOff, local bool) { return p.handOff, p.handOffLocal }

// Took records that the waiter's own attempt took the lock, whose value
// is value: the technique took it out of its line.
func (p *Place) Took(value string) {
	p.queued, p.mayBeQueued, p.won = false, false, value
}

// Died records that the waiter's client "died" (an injected crash): it
// leaves its line entry to go stale.
func (p *Place) Died() { p.queued, p.mayBeQueued = false, false }

// Tried records what an attempt of the waiter's own that did not take the
// lock told of its place in the line.
func (p *Place) Tried(o Outcome) {
	if o.Refused {
		p.queued, p.refusedTry, p.refusedAt = true, o.Try, o.Sent
		p.refusedCounted, p.refusedCounter = o.Counted, o.Counter
	}
	if (o.Refused || o.MayHaveRun) && p.inLineSince.IsZero() {
		p.inLineSince = o.Sent
	}
	if !o.Refused && o.MayHaveRun {
		// The attempt may have run and been refused, which queued the
		// waiter (the engine takes back a lock it may have taken): a Lock
		// that gives up leaves the line then too (Leave). So for a
		// technique that takes back its own attempts (redlock): a round
		// that failed for want of answers may have been refused, and so
		// queued the waiter, on the nodes that did answer.
		p.mayBeQueued = true
	}
}

// Leave ends w's wait, whose place is p: when it gave up after a refused attempt, the
// technique takes it out of its line in Redis (Abandon, which also passes
// on a lock a release in Redis handed off to it meanwhile), and the line
// remembers it for a while (departed), in case that Abandon did not reach
// Redis and a release hands it the lock later (lostHandOff); then w
// leaves the key's local line, which drops the line's subscription when
// it was the last, and a lock handed off to w without w taking it (by a
// local Unlock, or by a release in Redis after w gave up) is released, on
// a fresh context bounded by cleanupTimeout. An Abandon or a release that
// does not reach Redis (a fault) is tried again in the background until
// it does (abandonLater, releaseOrRetry), so that what w left behind does
// not hold the key after the fault heals.
func (l *Line) Leave(ctx context.Context, w *Waiter, p *Place) {
	a := w.next
	switch {
	case p.queued:
		abandoned := l.abandon(ctx, a)
		// Before it leaves the local line: a hand-off notice that comes
		// after finds it here (lostHandOff), one before reaches w.
		l.departed.add(a.Key, a.Waiter, time.Now())
		if !abandoned {
			l.abandonLater(a) // keep trying: see abandonLater
		}
	case p.mayBeQueued:
		// Only an attempt that lost its reply may have queued it, and its
		// node may be frozen: Lock does not wait for the Abandon, and a
		// hand-off notice that comes meanwhile finds it departed.
		l.departed.add(a.Key, a.Waiter, time.Now())
		l.abandonLater(a)
	}
	off, handedOff, unsubscribe := l.q.leave(a.Key, w, p.won)
	if l.quorum != nil {
		l.quorum.LockEnded(a.Key, a.Waiter)
	}
	if unsubscribe && l.hub != nil {
		l.hub.Unsubscribe(l.channel(a.Key))
	}
	// A lock handed to w that w did not take: by a local Unlock, or by a
	// release in Redis after w's Abandon (which passes on what came
	// before it, but may have failed). w gave up, so the lock is nobody's.
	if handedOff && (off.local || p.queued || p.mayBeQueued) && off.value != p.won {
		l.releaseOrRetry(ctx, Held{Key: a.Key, Value: off.value, Fence: off.fence})
	}
}

// abandon tells a technique that keeps a line of waiters in Redis that the
// waiter a has given up, on a fresh context bounded by cleanupTimeout (ctx
// may have ended), and reports whether that reached Redis (true, too, for
// a technique without a line).
func (l *Line) abandon(ctx context.Context, a Attempt) bool {
	if l.ab == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return reachedRedis(l.ab.Abandon(ctx, a))
}

// abandonLater is abandon in the background (cleanUpInBackground), tried
// until it reaches Redis, for up to a's TTL plus the departed horizon: by
// then the waiter's place in the line has gone stale, and a lock a release
// handed to it meanwhile (which the Abandon passes on) has expired. A
// waiter that gave up during a fault so leaves the line, and passes on a
// lock handed to it, once the fault heals, even when the hand-off's notice
// was lost; its place would otherwise hold a free lock back, and such a
// lock stay held, until they expire.
func (l *Line) abandonLater(a Attempt) {
	if l.ab == nil {
		return
	}
	l.cleanUpInBackground(a.TTL+l.departed.horizon, func(ctx context.Context) bool {
		return reachedRedis(l.ab.Abandon(ctx, a))
	})
}

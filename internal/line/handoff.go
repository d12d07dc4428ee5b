package line

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// A hand-off, end to end. A release in Redis whose line has a live head
// sets the lock to that waiter's name and publishes "handoff:<fence>:
// <waiter>" to the waiter's Locker (handoff.lua's handOn, run by the
// technique's release script). The Locker's Hub gives it to OnNotice,
// which hands it to the waiter by that name (lines.handOffByName); the
// waiter's Lock takes it (Place.Heard), or, when nobody waits by that
// name because the waiter gave up (departed), the lock is passed on
// (lostHandOff). A local Unlock of a HandOffer technique releases and
// makes the head's attempt in one step (Next), and gives it what it took
// (HandOver), or releases it when the waiter left meanwhile
// (handedToGone). A technique whose nodes each hand their copy (Quorum)
// gets every node's hand-off instead, and gives the waiter the lock once
// enough did (HandOffQuorum).

// handoff is a lock handed off to a waiter: by a release in Redis (a "handoff:"
// notice: the lock holds the waiter's name, and start is zero), or by an
// Unlock of the same Locker that released the lock and took it for the
// waiter in one step (HandOffer).
type handoff struct {
	value string    // the owner token the key holds
	fence uint64    // its fencing token
	start time.Time // the validity is counted from here; zero: see Place.take
	valid time.Duration
	local bool // by an Unlock of this Locker
	// try is, for a hand-off by a quorum of nodes (HandOffQuorum), the
	// attempt it was counted against; 0 otherwise.
	try uint64
}

// Handed is a lock handed off to a waiter, as its Lock call takes it:
// the owner token the key holds, its fencing token, and a validity
// counted from Start (zero: the Locker's TTL).
type Handed struct {
	Value    string
	Fence    uint64
	Start    time.Time
	Validity time.Duration
}

// take takes the lock handed off to w by h, for its Lock call whose place is p, with the validity's start.
// A hand-off by a release in Redis (the lock holds the waiter's name)
// came after an attempt put the waiter in the line, so its validity is
// counted from the send time of the earliest attempt that may have done
// so (inLineSince: refused, or its outcome unknown), and never from
// before the Lock call began; or, when the hand-off's fencing token is
// above the counter the last refusal found (Outcome.Counter), from that
// refusal's attempt, which the hand-off came after: a waiter that waited
// longer than its TTL does not get a lease that expired before it was
// handed over. "Refused at" alone is not a bound: a notice delayed past
// the handed lock's expiry would reach a waiter whose later attempt was
// refused (Heard drops a hand-off that an attempt begun after it arrived
// found gone). A lock handed off by a local Unlock, or by a quorum of
// nodes, comes with its own start and validity.
func (p *Place) take(w *Waiter, h handoff) Handed {
	p.queued, p.mayBeQueued = false, false // the hand-off took the waiter out of the line
	p.handOff, p.handOffLocal = true, h.local
	start := h.start
	if start.IsZero() {
		start = p.inLineSince
		if p.refusedCounted && h.fence <= math.MaxInt64 && int64(h.fence) > p.refusedCounter && p.refusedAt.After(start) {
			start = p.refusedAt // the hand-off came after that refusal
		}
	}
	if start.IsZero() || start.Before(w.next.Arrived) {
		start = w.next.Arrived // no attempt ran that could have queued it: the bound is the call's start
	}
	return Handed{Value: h.value, Fence: h.fence, Start: start, Validity: h.valid}
}

// OnNotice routes a release notice that node (its index in
// Config.Pools; -1 for the Hub's "look for yourself") received on
// channel: a hand-off to the waiter it names (to a Quorum technique
// instead, with the node), else "try now" to the head of the key's
// line. The bodies are protocol.Notice's.
func (l *Line) OnNotice(node int, channel, body string) {
	rkey, ok := protocol.LockOf(channel)
	if !ok {
		return
	}
	n := protocol.ParseNotice(body)
	if n.HandOff && l.quorum != nil {
		l.quorum.NodeHandOff(node, rkey, n.Waiter, n.Fence)
		return
	}
	if n.HandOff && l.confirm {
		// The release did not wait for the replicas: the waiter's own
		// attempt finds the lock in its name and waits for them.
		if !l.q.tryByName(rkey, n.Waiter) {
			l.lostHandOff(rkey, n.Waiter, n.Fence)
		}
		return
	}
	if lost := l.q.onNotice(rkey, n); lost {
		l.lostHandOff(rkey, n.Waiter, n.Fence)
	}
}

// tryByName tells the waiter named target in key's line to attempt now,
// and reports false when no waiter by that name is in the line.
func (q *lines) tryByName(key, target string) bool {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil {
		return false
	}
	i := slices.IndexFunc(ln.waiters, func(w *Waiter) bool { return w.next.Waiter == target })
	if i < 0 {
		return false
	}
	ln.waiters[i].tryNow()
	return true
}

// onNotice routes the release notice n for key to the key's line: a
// hand-off to the waiter it names, else "try now" to the head. It reports
// a hand-off that found no waiter by that name in the line (lost): the
// lock now holds the name of a waiter that is gone.
func (q *lines) onNotice(key string, n protocol.Notice) (lost bool) {
	if n.HandOff {
		return !q.handOffByName(key, n.Waiter, n.Fence)
	}
	q.poke(key, n.Waiter)
	return false
}

// Poke tells waiter, when it heads rkey's line, to attempt now; "" tells
// the head whoever it is (a local Unlock freed the key).
func (l *Line) Poke(rkey, waiter string) { l.q.poke(rkey, waiter) }

// lostHandOff passes on the lock of rkey handed to the waiter name (with
// fencing token fence) that is not in its line, when that waiter gave up
// (departed) rather than took the lock by an attempt of its own: the
// technique's owner-checked release of that name, in the background,
// which passes the lock on to the next waiter in line, as the waiter's
// Abandon would have. A release that finds the lock no longer the
// waiter's does nothing; one that cannot reach Redis is tried again for
// up to the Locker's TTL, which the hand-off set. Close waits for it (the
// Hub that calls OnNotice is closed first, so none starts once Close
// waits).
func (l *Line) lostHandOff(rkey, name string, fence uint64) {
	if l.departed.take(rkey, name, time.Now()) {
		l.ReleaseInBackground(Held{Key: rkey, Value: name, Fence: fence}, l.ttl)
	}
}

// Next returns the head of rkey's line and the attempt a local Unlock
// makes for it (Attempt.SetPass), or nil when nobody waits: see
// engine.HandOffer.
func (l *Line) Next(rkey string) (*Waiter, Attempt) { return l.q.nextAttempt(rkey) }

// HandOver gives w the lock that a local Unlock took for it by the
// attempt next, sent at h.Start (an empty h.Value means next.Token, a
// zero h.Validity next.TTL). When w has left the line meanwhile, or has
// another hand-off to take, the lock is released again (handedToGone).
func (l *Line) HandOver(ctx context.Context, w *Waiter, next Attempt, h Handed) {
	off := handoff{value: h.Value, fence: h.Fence, start: h.Start, valid: h.Validity, local: true}
	if off.value == "" {
		off.value = next.Token
	}
	if off.valid == 0 {
		off.valid = next.TTL
	}
	if !l.q.handOff(next.Key, w, off) {
		l.handedToGone(ctx, next.Key, w, off)
	}
}

// handedToGone deals with the lock h of the Redis key rkey that a local
// Unlock took for w after w left the key's line. A lock in w's name (a
// technique that hands locks to waiters by name answers w's own attempts
// with it too) may be the one w took by such an attempt and holds: it is
// left alone. Any other (a hand-off token of its own, or a lock in the
// name of a waiter that gave up) is nobody's: it is released, which
// passes it on to the next waiter in line, on a fresh context bounded by
// cleanupTimeout, and again in the background while that does not reach
// Redis (releaseOrRetry).
func (l *Line) handedToGone(ctx context.Context, rkey string, w *Waiter, h handoff) {
	if won := l.q.took(rkey, w); won != "" && won == h.value {
		return
	}
	l.releaseOrRetry(ctx, Held{Key: rkey, Value: h.value, Fence: h.fence})
}

// handOffByName hands the lock to the waiter named target in key's line,
// if it is there: a release in Redis made target's name the owner token,
// with fencing token fence. It reports false when no waiter by that name
// is in the line.
func (q *lines) handOffByName(key, target string, fence uint64) bool {
	found, _ := q.handOffIf(key, func(w *Waiter) bool { return w.next.Waiter == target }, handoff{value: target, fence: fence})
	return found
}

// handOff hands h to w if w is still in key's line and has no hand-off
// pending, and reports whether it did.
func (q *lines) handOff(key string, w *Waiter, h handoff) bool {
	_, sent := q.handOffIf(key, func(x *Waiter) bool { return x == w }, h)
	return sent
}

// handOffIf hands h to the first waiter in key's line that is reports
// true for, if there is one (found) and it has no hand-off pending
// (sent).
func (q *lines) handOffIf(key string, is func(*Waiter) bool, h handoff) (found, sent bool) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil {
		return false, false
	}
	i := slices.IndexFunc(ln.waiters, is)
	if i < 0 {
		return false, false
	}
	w := ln.waiters[i]
	return true, w.send(event{handedOff: true, off: h, tries: w.tries.Load()})
}

// Quorum is implemented by a technique whose lock is handed off by
// several nodes, each with a "handoff:" notice of its own (redlock: a
// release hands each node's copy of the lock to the head of that node's
// line). The line gives it every such notice, with the node it came
// from, instead of handing the lock to the waiter at once; the technique
// hands it over (HandOffQuorum) once enough nodes did, or tells the
// waiter to attempt (Poke), which takes what was handed to it. It passes
// on a copy handed to a waiter that no longer waits.
type Quorum interface {
	// NodeHandOff reports the hand-off to waiter of rkey's lock by node
	// (its index in the pools the notices come from), with fencing token
	// fence.
	NodeHandOff(node int, rkey, waiter string, fence uint64)
	// LockEnded reports that the Lock call named waiter, for rkey, ended,
	// whatever way, after its attempts and its Abandon.
	LockEnded(rkey, waiter string)
}

// QuorumHandOff is a lock that enough nodes handed to a waiter, for
// HandOffQuorum.
type QuorumHandOff struct {
	Waiter string // the waiter's name, which the lock holds
	Fence  uint64
	// Start is when the attempt that every node counted refused was sent:
	// each hand-off came after that node refused it. The validity is
	// counted from Start.
	Start    time.Time
	Validity time.Duration
	// Try is the number of that attempt (Attempt.Try): the waiter drops
	// the hand-off when it began a later attempt before taking it, since
	// that attempt took what was handed, or found it gone.
	Try uint64
}

// HandOffQuorum gives the waiter h.Waiter in rkey's line the lock h, and
// reports whether it did: false when the waiter is no longer in the line,
// or has another hand-off to take, and the technique must pass the lock
// on.
func (l *Line) HandOffQuorum(rkey string, h QuorumHandOff) bool {
	off := handoff{value: h.Waiter, fence: h.Fence, start: h.Start, valid: h.Validity, try: h.Try}
	_, sent := l.q.handOffIf(rkey, func(w *Waiter) bool { return w.next.Waiter == h.Waiter }, off)
	return sent
}

package line

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// A hand-off, end to end, as this file, line.lua and the technique's
// release (lua_release's release.go) read it. A local Unlock of a
// HandOffer technique (Release) makes, in one step with its release, the
// attempt of the head of the key's local line (nextAttempt); the release
// script (ReleaseSource: line.lua's release) hands the lock to that
// waiter when it heads the line in Redis (handOn) and replies with its
// fencing token (ReadRelease); handOver sends it to the waiter's events
// (send), and the waiter's Lock takes it (Heard, take), or, when it left
// meanwhile, it is released again (handedToGone). A release in Redis by
// any other Locker hands the lock to the live head of the line in Redis
// and publishes "handoff:" to that waiter's Locker, whose OnNotice hands
// it over by name (handOffByName). A technique whose nodes each hand
// their copy counts them first (Quorum, quorum.go).

// HandOffer is implemented by techniques that can release a lock and
// make an acquire attempt for another waiter in the same step: Release
// uses it when a waiter of the same Locker waits for the key, which hands
// the lock to that waiter one round trip sooner.
type HandOffer interface {
	// HandOff releases the lock h holds and makes the attempt next. It
	// returns what next got (Passed) and the release's outcome as
	// Technique.Release returns it.
	HandOff(ctx context.Context, h Held, next Attempt) (Passed, error)
}

// Passed is what a HandOff's attempt got: when Taken, the lock, whose
// owner token is Value (empty: the attempt's token), with its fencing
// token and its validity (zero: the attempt's TTL); else the waiter
// is told to try on its own.
type Passed struct {
	Taken    bool
	Value    string
	Fence    uint64
	Validity time.Duration
}

// Release releases the lock h holds, for the lease's Unlock: with a
// HandOffer technique and a waiter in h.Key's local line, it hands the
// lock to that waiter in the same step (HandOff), and otherwise it
// releases it (Technique.Release) and tells the head of the local line to
// try now. It reports whether the lock was passed to the waiter (then the
// lease is spent, whatever the release reported) and the release's
// outcome: nil, an error wrapping strategy.ErrNotHeld when the lock was
// no longer h's, or the Redis failure.
func (l *Line) Release(ctx context.Context, h Held) (passed bool, err error) {
	if l.handOffer != nil {
		if w, next := l.q.nextAttempt(h.Key); w != nil {
			start := time.Now()
			p, err := l.handOffer.HandOff(ctx, h, next)
			if p.Taken {
				l.handOver(ctx, w, next, Handed{Value: p.Value, Fence: p.Fence, Start: start, Validity: p.Validity})
				return true, err
			}
			l.q.poke(h.Key, "")
			return false, err
		}
	}
	err = l.tech.Release(ctx, h)
	l.q.poke(h.Key, "") // a local waiter tries now, without waiting for a notice
	return false, err
}

// nextAttempt returns the head of key's line and an attempt for it, with a
// token of its own (Attempt.SetPass), or nil when nobody waits.
func (q *lines) nextAttempt(key string) (*Waiter, Attempt) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil || len(ln.waiters) == 0 {
		return nil, Attempt{}
	}
	w := ln.waiters[0]
	w.passes++
	a := w.next
	a.SetPass(w.passes)
	return w, a
}

// SetPass makes a the attempt number pass that a local Unlock makes for
// the waiter (a hand-off), with its token.
func (a *Attempt) SetPass(pass uint64) { a.Try, a.Pass, a.Token = 0, pass, token(a.Waiter, "p", pass) }

// handOver gives w the lock that a local Unlock took for it by the
// attempt next, sent at h.Start (an empty h.Value means next.Token, a
// zero h.Validity next.TTL). When w has left the line meanwhile, or has
// another hand-off to take, the lock is released again (handedToGone).
func (l *Line) handOver(ctx context.Context, w *Waiter, next Attempt, h Handed) {
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

// handedToGone deals with the lock h of rkey that a local Unlock took for
// w after w left the key's line. A lock in w's name may be the one w took
// by an attempt of its own and holds: it is left alone. Any other is
// nobody's: it is released, which passes it on to the next waiter in
// line (releaseOrRetry: again in the background while that fails).
func (l *Line) handedToGone(ctx context.Context, rkey string, w *Waiter, h handoff) {
	if won := l.q.took(rkey, w); won != "" && won == h.value {
		return
	}
	l.releaseOrRetry(ctx, Held{Key: rkey, Value: h.value, Fence: h.fence})
}

// took returns the value of the lock w took by an attempt of its own, as
// it left key's line (leave), or "".
func (q *lines) took(key string, w *Waiter) string {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return w.won
}

// handOffByName hands the lock to the waiter named target in key's line,
// if it is there: a release in Redis made target's name the owner token,
// with fencing token fence. It reports false when no waiter by that name
// is in the line.
func (q *lines) handOffByName(key, target string, fence uint64) bool {
	found, _ := q.handOffIf(key, named(target), handoff{value: target, fence: fence})
	return found
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
	return q.find(key, named(target), (*Waiter).tryNow)
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
	found = q.find(key, is, func(w *Waiter) {
		sent = w.send(event{handedOff: true, off: h, tries: w.tries.Load()})
	})
	return found, sent
}

// find calls fn, under the shard's lock, on the first waiter in key's
// line that is reports true for, and reports whether there was one.
func (q *lines) find(key string, is func(*Waiter) bool, fn func(*Waiter)) bool {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil {
		return false
	}
	i := slices.IndexFunc(ln.waiters, is)
	if i >= 0 {
		fn(ln.waiters[i])
	}
	return i >= 0
}

// named returns a test of whether a waiter is the one named target.
func named(target string) func(*Waiter) bool {
	return func(w *Waiter) bool { return w.next.Waiter == target }
}

// event is what a waiter hears from its line: "try now", or a hand-off.
type event struct {
	handedOff bool    // the lock is the waiter's: see off
	off       handoff // when handedOff
	tries     uint64  // the waiter's attempt count when it was raised ("try now") or reached it (a hand-off)
}

// stale reports whether e is a "try now" raised before w's latest attempt
// began.
func (e event) stale(w *Waiter) bool { return !e.handedOff && e.tries < w.tries.Load() }

// send puts e on w's events channel, keeping at most one event there: a
// hand-off replaces a pending "try now", a "try now" replaces an older one,
// and nothing replaces a pending hand-off. It reports whether e was sent.
// The shard's lock is held, so no other send runs; the waiter may take the
// pending event meanwhile, which leaves room.
func (w *Waiter) send(e event) bool {
	for {
		select {
		case w.events <- e:
			return true
		default:
		}
		select {
		case old := <-w.events:
			if old.handedOff {
				w.events <- old // room: only senders, holding the lock, fill it
				return false
			}
		default:
		}
	}
}

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

// Heard reads e, an event from w's Events, for the Lock call whose place
// is p: the lock handed to w (taken, and h is it, see take), a reason to
// attempt now (try), or nothing (an event that an attempt begun since has
// answered).
func (p *Place) Heard(w *Waiter, e event) (h Handed, taken, try bool) {
	if e.handedOff && e.off.start.IsZero() && p.refusedTry > e.tries {
		// An attempt begun after this hand-off reached the waiter found
		// the lock not the waiter's: the handed lock is gone (it
		// expired), and validity counted from that attempt would outlast
		// it.
		return Handed{}, false, false
	}
	if e.handedOff && !(e.off.try > 0 && w.tries.Load() > e.off.try) {
		return p.take(w, e.off), true, false
	}
	// A quorum hand-off that an attempt begun since took or found gone is
	// dropped, and the waiter attempts at once (stale is false for a
	// hand-off): the hand-off may have kept a "try now" out (send).
	return Handed{}, false, !e.stale(w)
}

// take takes the lock h handed off to w, for its Lock call whose place
// is p. A hand-off by a release in Redis (the lock holds the waiter's
// name) came after an attempt put the waiter in the line: its validity
// counts from the send time of the earliest attempt that may have done so
// (inLineSince), never from before the call began, or, when its fencing
// token is above the counter the last refusal found, from that refusal's
// attempt, so a waiter that waited longer than its TTL gets no lease that
// expired before it was handed over ("refused at" alone is no bound: a
// notice delayed past the lock's expiry may follow a later refusal, and
// Heard drops it). A local Unlock's or a quorum's comes with its own start.
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

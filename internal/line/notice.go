package line

import (
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// Release notices, as the Locker's Hub receives them: OnNotice hands a
// "handoff:" to the waiter it names, tells the head to try on any other,
// or gives every node's hand-off to a Quorum technique, which counts them
// and hands the waiter the lock once enough did (Waiters).

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

// Quorum is implemented by a technique whose lock is handed off by
// several nodes, each with a "handoff:" notice of its own (redlock: a
// release hands each node's copy of the lock to the head of that node's
// line). The line gives it every such notice, with the node it came
// from, instead of handing the lock to the waiter at once; the technique
// hands it over (HandOffQuorum) once enough nodes did, or tells the
// waiter to attempt (Poke), which takes what was handed to it. It passes
// on a copy handed to a waiter that no longer waits.
type Quorum interface {
	// UseWaiters gives the technique its Locker's waiters, which it hands
	// locks to; New calls it once, before any notice or Lock call.
	UseWaiters(w Waiters)
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

// Waiters is how a Quorum technique reaches the waiters of its Locker's
// line: a quorum of hand-offs completes outside the line's calls too (a
// node's answer to the waiter's own attempt, a NodeTimeout timer), so the
// technique keeps this, and nothing else of the line.
type Waiters interface {
	// Poke tells waiter, when it heads rkey's line, to attempt now.
	Poke(rkey, waiter string)
	// HandOffQuorum gives waiter h.Waiter the lock h; see Line.HandOffQuorum.
	HandOffQuorum(rkey string, h QuorumHandOff) bool
}

// Poke tells waiter, when it heads rkey's line, to attempt now; "" tells
// the head whoever it is.
func (l *Line) Poke(rkey, waiter string) { l.q.poke(rkey, waiter) }

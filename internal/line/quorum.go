package line

// A lock that several nodes hand off, each with a "handoff:" notice of
// its own (OnNotice gives them to Quorum), reaches the waiter once the
// technique counted enough (HandOffQuorum).

import "time"

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
	_, sent := l.q.handOffIf(rkey, named(h.Waiter), off)
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

package line

import (
	"slices"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

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

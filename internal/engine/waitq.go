package engine

import (
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"time"
)

// lines keeps, per Redis key, the FIFO line of this Locker's goroutines
// waiting in Lock. Only the head of a line contends for the key in Redis;
// the others wait their turn locally. That serves local waiters in order (a
// goroutine that releases and at once locks again joins the back of the
// line instead of barging in), and keeps one poller per key per process.
// The head is poked when a local lease on the key is released or a release
// notice arrives.
type lines struct {
	seed   maphash.Seed
	shards [lineShards]lineShard
}

// lineShards spreads the keys over independent locks, so that goroutines
// locking different keys do not contend for one mutex.
const lineShards = 64

type lineShard struct {
	mu    sync.Mutex
	byKey map[string]*line
}

func newLines() *lines { return &lines{seed: maphash.MakeSeed()} }

// shard returns the shard that holds key's line.
func (q *lines) shard(key string) *lineShard {
	return &q.shards[maphash.String(q.seed, key)%lineShards]
}

type line struct {
	waiters    []*waiter // waiters[0] is the head
	subscribed bool      // the head subscribed to the key's release notices
}

type waiter struct {
	token string        // names the waiter in release notices
	turn  chan struct{} // closed when the waiter becomes the head
	poke  chan struct{} // capacity 1: "try again now"
	grant chan handoff  // capacity 1: "the lock is yours"
	// next is the waiter's attempt for a Passer's Unlock to make, with
	// Token empty; passes counts those attempts (guarded by the shard's
	// lock).
	next   Attempt
	passes int
}

// handoff is a lock handed to a waiter: by a release in Redis (a "grant:"
// notice: the lock holds the waiter's name, and start is zero), or by an
// Unlock of the same Locker that passed the lock on (Passer).
type handoff struct {
	value string    // the owner token the key holds
	fence uint64    // its fencing token
	start time.Time // the validity is counted from here; zero: from the last refused attempt
	valid time.Duration
	local bool // passed by an Unlock of this Locker
}

// join appends a waiter for key; it is the head at once if the line was
// empty.
func (q *lines) join(key, token string, next Attempt) *waiter {
	w := &waiter{token: token, turn: make(chan struct{}), poke: make(chan struct{}, 1), grant: make(chan handoff, 1), next: next}
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byKey == nil {
		sh.byKey = map[string]*line{}
	}
	ln := sh.byKey[key]
	if ln == nil {
		ln = &line{}
		sh.byKey[key] = ln
	}
	ln.waiters = append(ln.waiters, w)
	if len(ln.waiters) == 1 {
		close(w.turn)
	}
	return w
}

// leave removes w from key's line, handing the turn on if w was the head.
// It reports whether the line is now empty and had subscribed, in which
// case the caller unsubscribes.
func (q *lines) leave(key string, w *waiter) (unsubscribe bool) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil {
		return false
	}
	for i, x := range ln.waiters {
		if x != w {
			continue
		}
		ln.waiters = append(ln.waiters[:i], ln.waiters[i+1:]...)
		if i == 0 && len(ln.waiters) > 0 {
			close(ln.waiters[0].turn)
		}
		break
	}
	if len(ln.waiters) > 0 {
		return false
	}
	delete(sh.byKey, key)
	return ln.subscribed
}

// markSubscribed records that key's line holds a subscription, and reports
// whether it did not already (so the caller subscribes exactly once).
func (q *lines) markSubscribed(key string) bool {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil || ln.subscribed {
		return false
	}
	ln.subscribed = true
	return true
}

// poke tells the head of key's line, if any, to try again now, unless the
// notice names another waiter (target is a token, or "" for anyone).
func (q *lines) poke(key, target string) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil || len(ln.waiters) == 0 || (target != "" && ln.waiters[0].token != target) {
		return
	}
	select {
	case ln.waiters[0].poke <- struct{}{}:
	default:
	}
}

// grant tells the waiter named target in key's line, if it is there, that
// a release handed it the lock with fencing token fence.
func (q *lines) grant(key, target string, fence uint64) {
	q.deliver(key, func(w *waiter) bool { return w.token == target }, handoff{value: target, fence: fence})
}

// nextAttempt returns the head of key's line and an attempt for it, with a
// token of its own, the waiter's name + ".p" + a number (Unlock replaces it
// with a fresh Config.Token where one is set), or nil when nobody waits.
func (q *lines) nextAttempt(key string) (*waiter, Attempt) {
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
	a.Token = w.token + ".p" + strconv.Itoa(w.passes)
	return w, a
}

// give hands h to w if w is still in key's line and has no hand-off
// pending, and reports whether it did.
func (q *lines) give(key string, w *waiter, h handoff) bool {
	return q.deliver(key, func(x *waiter) bool { return x == w }, h)
}

// deliver hands h to the first waiter in key's line that is reports true
// for, if there is one and it has no hand-off pending, and reports whether
// it did.
func (q *lines) deliver(key string, is func(*waiter) bool, h handoff) bool {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil {
		return false
	}
	i := slices.IndexFunc(ln.waiters, is)
	if i < 0 {
		return false
	}
	select {
	case ln.waiters[i].grant <- h:
		return true
	default:
		return false
	}
}

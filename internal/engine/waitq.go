package engine

import (
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// lines keeps, per Redis key, the FIFO line of this Locker's goroutines
// waiting in Lock. Only the head of a line contends for the key in Redis;
// the others wait their turn locally. That serves local waiters in order (a
// goroutine that releases and at once locks again joins the back of the
// line instead of barging in), and keeps one poller per key per process.
// The head is told to try now when a local lease on the key is released or
// a release notice arrives.
//
// Every waiter hears from its line on one channel, events: "try now" (its
// turn came, or a release may have freed the key) or a hand-off (the lock
// is its own). Events are sent only under the shard's lock and only to a
// waiter that is still in its line, so a waiter that leaves gets back, from
// leave, the hand-off it was sent meanwhile, and nothing can be sent to it
// afterwards.
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
	// spare is the last line that emptied, kept for the next key's first
	// waiter: an uncontended Lock then allocates no line (nor its slice).
	// A line is only ever reached under mu, through byKey, so reusing one
	// that left byKey cannot confuse anybody.
	spare *line
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
	name string // the Lock call's name: release notices name the waiter by it
	// events carries the waiter's next event; capacity 1 (see send).
	events chan event
	// tries counts the waiter's attempts; a "try now" stamped with an
	// earlier count was raised before its latest attempt began, so that
	// attempt already saw what it announced.
	tries atomic.Uint64
	// next is the waiter's attempt for a HandOffer's Unlock to make, with
	// Token empty; passes counts those attempts (guarded by the shard's
	// lock).
	next   Attempt
	passes int
	// won is the value of the lock the waiter took by an attempt of its
	// own, set as it leaves the line (guarded by the shard's lock): a
	// local hand-off that reaches the line after it (handedToGone) may be
	// that same lock.
	won string
}

// event is what a waiter hears from its line.
type event struct {
	handedOff bool    // the lock is the waiter's: see off
	off       handoff // when handedOff
	tries     uint64  // the waiter's attempt count when it was raised ("try now") or reached it (a hand-off)
}

// stale reports whether e is a "try now" raised before w's latest attempt
// began.
func (e event) stale(w *waiter) bool { return !e.handedOff && e.tries < w.tries.Load() }

// handoff is a lock handed off to a waiter: by a release in Redis (a "handoff:"
// notice: the lock holds the waiter's name, and start is zero), or by an
// Unlock of the same Locker that released the lock and took it for the
// waiter in one step (HandOffer).
type handoff struct {
	value string    // the owner token the key holds
	fence uint64    // its fencing token
	start time.Time // the validity is counted from here; zero: see Locker.handedOff
	valid time.Duration
	local bool // by an Unlock of this Locker
	// try is, for a hand-off by a quorum of nodes (HandOffQuorum), the
	// attempt it was counted against; 0 otherwise.
	try uint64
}

// send puts e on w's events channel, keeping at most one event there: a
// hand-off replaces a pending "try now", a "try now" replaces an older one,
// and nothing replaces a pending hand-off. It reports whether e was sent.
// The shard's lock is held, so no other send runs; the waiter may take the
// pending event meanwhile, which leaves room.
func (w *waiter) send(e event) bool {
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

// tryNow tells w to make an attempt now.
func (w *waiter) tryNow() { w.send(event{tries: w.tries.Load()}) }

// join appends a waiter for key, named name; it is the head, told to try
// at once, if the line was empty.
func (q *lines) join(key, name string, next Attempt) *waiter {
	w := &waiter{name: name, events: make(chan event, 1), next: next}
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byKey == nil {
		sh.byKey = map[string]*line{}
	}
	ln := sh.byKey[key]
	if ln == nil {
		ln, sh.spare = sh.spare, nil
		if ln == nil {
			ln = &line{}
		}
		sh.byKey[key] = ln
	}
	ln.waiters = append(ln.waiters, w)
	if len(ln.waiters) == 1 {
		w.tryNow()
	}
	return w
}

// leave removes w from key's line, telling the next waiter to try if w was
// the head, and records won, the value of the lock w took by an attempt
// of its own ("" when none; see took). It returns the hand-off w was sent
// and has not taken, if any, and reports whether the line is now empty
// and had subscribed, in which case the caller unsubscribes.
func (q *lines) leave(key string, w *waiter, won string) (off handoff, handedOff, unsubscribe bool) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w.won = won
	select {
	case e := <-w.events:
		off, handedOff = e.off, e.handedOff
	default:
	}
	ln := sh.byKey[key]
	if ln == nil {
		return off, handedOff, false
	}
	if i := slices.Index(ln.waiters, w); i >= 0 {
		ln.waiters = slices.Delete(ln.waiters, i, i+1)
		if i == 0 && len(ln.waiters) > 0 {
			ln.waiters[0].tryNow()
		}
	}
	if len(ln.waiters) > 0 {
		return off, handedOff, false
	}
	delete(sh.byKey, key)
	unsubscribe = ln.subscribed
	clear(ln.waiters[:cap(ln.waiters)]) // drop the pointers the slice still holds
	*ln = line{waiters: ln.waiters[:0]}
	sh.spare = ln
	return off, handedOff, unsubscribe
}

// took returns the value of the lock w took by an attempt of its own, as
// it left key's line (leave), or "".
func (q *lines) took(key string, w *waiter) string {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return w.won
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
// notice names another waiter (target is a waiter's name, or "" for
// anyone).
func (q *lines) poke(key, target string) {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ln := sh.byKey[key]
	if ln == nil || len(ln.waiters) == 0 || (target != "" && ln.waiters[0].name != target) {
		return
	}
	ln.waiters[0].tryNow()
}

// handOffByName hands the lock to the waiter named target in key's line,
// if it is there: a release in Redis made target's name the owner token,
// with fencing token fence. It reports false when no waiter by that name
// is in the line.
func (q *lines) handOffByName(key, target string, fence uint64) bool {
	found, _ := q.handOffIf(key, func(w *waiter) bool { return w.name == target }, handoff{value: target, fence: fence})
	return found
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
	a.Token = w.name + ".p" + strconv.Itoa(w.passes)
	return w, a
}

// handOff hands h to w if w is still in key's line and has no hand-off
// pending, and reports whether it did.
func (q *lines) handOff(key string, w *waiter, h handoff) bool {
	_, sent := q.handOffIf(key, func(x *waiter) bool { return x == w }, h)
	return sent
}

// handOffIf hands h to the first waiter in key's line that is reports
// true for, if there is one (found) and it has no hand-off pending
// (sent).
func (q *lines) handOffIf(key string, is func(*waiter) bool, h handoff) (found, sent bool) {
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

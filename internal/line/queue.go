package line

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
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
	byKey map[string]*keyLine
	// spare is the last line that emptied, kept for the next key's first
	// waiter: an uncontended Lock then allocates no line (nor its slice).
	// A line is only ever reached under mu, through byKey, so reusing one
	// that left byKey cannot confuse anybody.
	spare *keyLine
}

func newLines() *lines { return &lines{seed: maphash.MakeSeed()} }

// shard returns the shard that holds key's line.
func (q *lines) shard(key string) *lineShard {
	return &q.shards[maphash.String(q.seed, key)%lineShards]
}

type keyLine struct {
	waiters    []*Waiter // waiters[0] is the head
	subscribed bool      // the head subscribed to the key's release notices
}

// Waiter is one Lock call in its Locker's line for a key (Line.Join),
// from its first attempt until it leaves (Line.Leave).
type Waiter struct {
	// events carries the waiter's next event; capacity 1 (see send).
	events chan event
	// tries counts the waiter's attempts; a "try now" stamped with an
	// earlier count was raised before its latest attempt began, so that
	// attempt already saw what it announced.
	tries atomic.Uint64
	// next is the waiter's attempt, with Token empty: its own (Line.Try)
	// or one a HandOffer's Unlock makes for it (Line.Next); next.Waiter is
	// the Lock call's name, by which release notices name the waiter
	// (Name); passes counts the attempts made by an Unlock (guarded by
	// the shard's lock).
	next   Attempt
	passes uint64
	// won is the value of the lock the waiter took by an attempt of its
	// own, set as it leaves the line (guarded by the shard's lock): a
	// local hand-off that reaches the line after it (handedToGone) may be
	// that same lock.
	won string
}

// tryNow tells w to make an attempt now.
func (w *Waiter) tryNow() { w.send(event{tries: w.tries.Load()}) }

// join appends a waiter for key, named name; it is the head, told to try
// at once, if the line was empty.
func (q *lines) join(key, name string, next Attempt) *Waiter {
	next.Waiter = name
	w := &Waiter{events: make(chan event, 1), next: next}
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.byKey == nil {
		sh.byKey = map[string]*keyLine{}
	}
	ln := sh.byKey[key]
	if ln == nil {
		ln, sh.spare = sh.spare, nil
		if ln == nil {
			ln = &keyLine{}
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
func (q *lines) leave(key string, w *Waiter, won string) (off handoff, handedOff, unsubscribe bool) {
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
	*ln = keyLine{waiters: ln.waiters[:0]}
	sh.spare = ln
	return off, handedOff, unsubscribe
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
	if ln == nil || len(ln.waiters) == 0 || (target != "" && ln.waiters[0].next.Waiter != target) {
		return
	}
	ln.waiters[0].tryNow()
}

// len returns how many waiters key's line holds.
func (q *lines) len(key string) int {
	sh := q.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ln := sh.byKey[key]; ln != nil {
		return len(ln.waiters)
	}
	return 0
}

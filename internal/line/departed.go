package line

import (
	"sync"
	"time"
)

// departed remembers, for a while, the Lock calls of this Locker that gave
// up after a refused attempt had put them in a technique's line in Redis.
// Such a call's Abandon may not have reached Redis (a reply lost, a
// connection refused), so a release in Redis may still hand the lock to
// it: the lock then holds the departed waiter's name, and its hand-off
// notice reaches a Locker in which nobody waits by that name. Without
// this, the lock would be held by nobody until its TTL; with it, the
// line passes the lock on (lostHandOff) as the waiter's own Abandon would
// have.
//
// A release hands the lock only to a head seen within the line's stale
// bound, and a waiter is seen only when it attempts, so a departed waiter
// can be handed the lock for at most that long after it left: horizon,
// twice the stale bound, covers it and the notice's delivery.
type departed struct {
	horizon time.Duration // 0: remember nothing (no line in Redis)

	mu     sync.Mutex
	byName map[departure]struct{}
	order  []departedAt // in the order they left, for forgetting
}

// departure is a departed waiter: its lock's Redis key and its name.
type departure struct{ key, name string }

type departedAt struct {
	departure
	at time.Time
}

// add remembers that the waiter named name, of the lock whose Redis key is
// key, left at now, and forgets the ones that left more than horizon ago.
func (d *departed) add(key, name string, now time.Time) {
	if d.horizon <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forget(now)
	if d.byName == nil {
		d.byName = map[departure]struct{}{}
	}
	w := departure{key, name}
	d.byName[w] = struct{}{}
	d.order = append(d.order, departedAt{w, now})
}

// take reports whether the waiter named name, of key, left within horizon
// of now, and forgets it: a lock is handed to a waiter once.
func (d *departed) take(key, name string, now time.Time) bool {
	if d.horizon <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forget(now)
	w := departure{key, name}
	if _, ok := d.byName[w]; !ok {
		return false
	}
	delete(d.byName, w)
	return true
}

// forget drops the departures older than horizon. d.mu is held.
func (d *departed) forget(now time.Time) {
	n := 0
	for n < len(d.order) && now.Sub(d.order[n].at) > d.horizon {
		delete(d.byName, d.order[n].departure)
		n++
	}
	if n > 0 {
		d.order = append(d.order[:0], d.order[n:]...)
	}
}

package redlock

import (
	"context"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
)

// leftWaiters remembers, for a while, the Lock calls of this Locker that
// gave up (Abandon). A failed attempt's undo puts its waiter back in a
// node's line (requeueOn), and it may reach the node after the waiter's
// Abandon there: a Lock call cut short by its context decides its round
// without waiting for the undos. The waiter, back in line, seen just now
// and its Locker still listening, would then hold that node's copy of a
// free lock for LineListened. An undo, or an owed one paid late, that
// finds its waiter gone sends no requeue, and one that finds it gone
// after it was sent makes the waiter leave again, after it on the same
// connection.
type leftWaiters struct {
	mu     sync.Mutex
	byName map[string]struct{}
	order  []leftAt // in the order they left, for forgetting
}

type leftAt struct {
	name string
	at   time.Time
}

// add remembers that the waiter named name left at now, and forgets the
// ones that left more than horizon ago: by then every undo of theirs has
// run or been dropped.
func (w *leftWaiters) add(name string, now time.Time, horizon time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(w.order) && now.Sub(w.order[n].at) > horizon {
		delete(w.byName, w.order[n].name)
		n++
	}
	if n > 0 {
		w.order = append(w.order[:0], w.order[n:]...)
	}
	if w.byName == nil {
		w.byName = map[string]struct{}{}
	}
	if _, ok := w.byName[name]; ok {
		return // Abandon tried again (line.Abandoner)
	}
	w.byName[name] = struct{}{}
	w.order = append(w.order, leftAt{name, now})
}

// has reports whether the waiter named name left (and is not forgotten).
func (w *leftWaiters) has(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.byName[name]
	return ok
}

// leftHorizon is how long a waiter that left is remembered: an owed
// requeue is paid at most the longest TTL after it was owed, and an undo
// runs within NodeTimeout of its round's decision.
func (t *technique) leftHorizon() time.Duration {
	return time.Duration(t.maxTTL.Load()) + 2*t.s.nodeTimeout
}

// requeueOn takes back the failed attempt a of a waiting Lock call on l's
// node: it deletes the lock if it holds a's token and puts the waiter back
// in the node's line, where the attempt's SET took it out (release.lua).
// When the Lock call has given up (leftWaiters) it only deletes the lock,
// and when it gave up while the requeue was on its way, the waiter leaves
// the line again, after the requeue on the same connection. A requeue
// that loses its reply is owed to the node, and so is the leave after it.
func (t *technique) requeueOn(ctx context.Context, l *link, keys []any, a engine.Attempt) {
	if t.left.has(a.Waiter) {
		t.releaseOn(ctx, l, keys, a.Token, plainRelease)
		return
	}
	member := lineMember(a)
	kv := append(append(t.release.Args(7), keys...), a.Token, a.Arrived.UnixMicro(), member)
	if !l.lost {
		_, _ = t.evalArgs(ctx, l, t.release, kv)
	}
	if l.lost {
		// Owed, as releaseOn owes; once paid, the waiter leaves again if
		// it gave up by then.
		t.oweCall(l.n, owedRelease{kv: kv, requeued: &requeued{rkey: a.Key, waiter: a.Waiter, member: member}})
		return
	}
	if t.left.has(a.Waiter) {
		t.leaveOp(a.Key, a.Waiter, member)(ctx, l)
	}
}

// oweLeave records that n is owed the leave of the waiter named waiter
// (line member member) from rkey's line (abandon.lua), which did not reach
// it: a Lock call that gave up during a fault leaves the line as soon as
// the node answers again, rather than keep a free lock's place there.
func (t *technique) oweLeave(n *node, rkey, waiter, member string) {
	keys := keysOf(rkey)
	kv := append(append(t.abandon.Args(len(keys)+3), keys...), member, waiter, protocol.Channel(rkey))
	t.oweCall(n, owedRelease{kv: kv, script: t.abandon})
}

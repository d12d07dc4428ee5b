package redlock

import (
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
)

// grants collects, for each of this Locker's waiting Lock calls, the
// hand-offs the nodes' releases made to it, and hands the lock to the
// waiter once a quorum of nodes did, without an acquire round of its own.
//
// A release on a node whose line has a live head sets that node's copy of
// the lock to the waiter's name, with the node's next fencing token, and
// sends the waiter's Locker a "handoff:<fence>:<waiter>" notice (handOn).
// A hand-off from node n counts for the waiter's latest attempt k when:
//   - n refused k (so n queued the waiter), and the notice's token is
//     larger than the counter n reported with that refusal: counters only
//     grow, and only a SET of the lock (a hand-off's among them)
//     increments one, so that hand-off came after n refused k, and n's
//     copy was set, with the waiter's TTL, after k was sent;
//   - every other request of the Lock call to n has been answered, and
//     none that was answered after k began may have taken the lock there
//     (answer.mayHold): the acquire script takes a copy handed to its own
//     Lock call, so an earlier attempt's request that reaches n late, or a
//     local hand-off's attempt for the waiter, could take the copy, and
//     its undo delete it.
//
// Once Q nodes count, the lock is the waiter's, its validity counted from
// k's start like an acquire round's. An attempt begun after the hand-off
// reached the waiter takes the handed copies or finds them gone, so the
// engine drops the hand-off then (line.QuorumHandOff.Try).
//
// When the counted tokens differ (a node missed increments) the fence
// would need a write-back, and when too few nodes handed the lock within
// NodeTimeout of the first (another waiter heads some lines, or nodes
// are slow), the waiter is told to attempt instead: its acquire round
// takes the copies handed to it and settles the fence as any round does.
type grants struct {
	mu       sync.Mutex
	byWaiter map[string]*waiting
	// free keeps up to maxFreeWaiting states of ended Lock calls for the
	// next ones: an uncontended Lock then allocates none.
	free []*waiting
}

// maxFreeWaiting bounds grants.free.
const maxFreeWaiting = 64

// newWaiting returns a zeroed state for rkey over n nodes. g.mu is held.
func (g *grants) newWaiting(rkey string, n int) *waiting {
	if k := len(g.free); k > 0 {
		w := g.free[k-1]
		g.free = g.free[:k-1]
		w.rkey = rkey
		return w
	}
	return &waiting{rkey: rkey, nodes: make([]nodeGrant, n)}
}

// recycle keeps w, just taken out of byWaiter, for newWaiting. g.mu is
// held, and w's timer is stopped: nothing refers to w any more.
func (g *grants) recycle(w *waiting) {
	if len(g.free) < maxFreeWaiting {
		clear(w.nodes)
		*w = waiting{nodes: w.nodes}
		g.free = append(g.free, w)
	}
}

// waiting is one waiting Lock call's state in grants, from its first
// attempt until the engine reports that the Lock call ended (LockEnded),
// or, once a quorum's hand-off was delivered, until that lease is
// released or NodeTimeout passes (settleDelivered).
type waiting struct {
	rkey  string
	try   uint64        // the latest attempt's number
	start time.Time     // when it was sent
	ttl   time.Duration // the TTL it asked for, which a hand-off sets
	nodes []nodeGrant
	// gather pokes the waiter when too few nodes handed it the lock in
	// time; nil while no hand-off counts. Once delivered, it settles the
	// hand-off instead (settleDelivered).
	gather *time.Timer
	// handed: some node handed the waiter a copy since attempt try began,
	// so that an answer without one costs no decision.
	handed bool
	// delivered: the lock was handed to the waiter (HandOffQuorum). Its
	// lease, whose value is the waiter's name, releases every copy handed
	// to it, so later hand-offs need nothing.
	delivered bool
}

// nodeGrant is what grants knows of one node for one waiter.
type nodeGrant struct {
	// refused is the fencing counter the node reported when it refused
	// attempt try (-1: none), or noRefusal.
	refused int64
	// handed is the token of the latest hand-off to the waiter since
	// attempt try began (0: none).
	handed int64
	// inflight counts the waiter's requests to the node not answered yet.
	inflight int32
	// tainted: a request that another of the waiter's attempts made may
	// have taken a copy handed to it there; no hand-off counts from the
	// node for this waiter any more.
	tainted bool
	// ever: the node handed the waiter a copy at all; when the Lock call
	// ends without having taken it (an attempt that won without reaching
	// the node), LockEnded passes it on.
	ever bool
}

// noRefusal marks a node whose answer to the attempt was not a refusal
// that queued the waiter (yet).
const noRefusal = -2

// grantAttempt is one attempt as grants tracks it (zero: not tracked).
type grantAttempt struct {
	waiter string
	try    uint64 // 0 for an attempt that is not the Lock call's own (a local hand-off's)
}

// beginGrant records a's attempt, for a Lock call, which is about to be
// sent to every node (at start). The Lock call's own attempt starts a new
// count: the hand-offs and refusals of its earlier attempts no longer
// count. Every request to a node counts as in flight until answeredGrant
// reports its answer.
func (t *technique) beginGrant(a engine.Attempt, start time.Time) grantAttempt {
	if !a.Waits {
		return grantAttempt{}
	}
	try, own := a.Try, a.Try > 0 // a local hand-off's attempt is not the Lock call's own
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[a.Waiter]
	if w == nil {
		if !own {
			return grantAttempt{} // not waiting (yet): nothing to take
		}
		if g.byWaiter == nil {
			g.byWaiter = map[string]*waiting{}
		}
		w = g.newWaiting(a.Key, len(t.nodes))
		g.byWaiter[a.Waiter] = w
	}
	if own {
		// A delivered hand-off the waiter did not take (this attempt began
		// first) takes the copies, or they are passed on at the end (ever).
		w.delivered = false
		w.try, w.start, w.ttl, w.handed = try, start, a.TTL, false
		w.stopGather()
	}
	for i := range w.nodes {
		n := &w.nodes[i]
		if own {
			n.refused, n.handed = noRefusal, 0
		}
		n.inflight++
	}
	return grantAttempt{waiter: a.Waiter, try: try}
}

// answeredGrant records node's answer v to attempt ga (a zero answer for a
// request never sent): a refusal of the waiter's latest attempt that
// queued it, with the node's counter then; or, from another of its
// attempts, an answer that may have taken a copy handed to it (tainted).
func (t *technique) answeredGrant(ga grantAttempt, node int, v answer) {
	if ga.waiter == "" {
		return
	}
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[ga.waiter]
	if w == nil {
		return
	}
	n := &w.nodes[node]
	n.inflight--
	switch {
	case ga.try != w.try || ga.try == 0:
		n.tainted = n.tainted || v.mayHold
	case v.queued:
		n.refused = v.fenceSeen
	}
	if w.handed && !w.delivered {
		t.decideGrant(ga.waiter, w)
	}
}

// LockEnded forgets the waiter, whose Lock call ended
// (line.Quorum): it took the lock by an attempt of its own or
// from a local Unlock, or gave up. The copies of the lock nodes handed it
// are passed on (a copy one of its attempts took holds that attempt's
// token by now, and is left alone). A waiter handed the lock by a quorum
// stays until its hand-off is settled.
func (t *technique) LockEnded(rkey, waiter string) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil || w.rkey != rkey || w.delivered {
		return
	}
	w.stopGather()
	delete(g.byWaiter, waiter)
	if handed := t.nodesThatHanded(w, true); len(handed) > 0 {
		t.passOnNodes(w.rkey, waiter, handed)
	}
	g.recycle(w)
}

// NodeHandOff records that node handed the lock of rkey to waiter with
// fencing token fence (line.Quorum). A copy handed to a Lock
// call of this Locker that no longer waits (it took the lock by an attempt
// of its own or from other nodes' hand-offs, which did not count this
// one, or it gave up) is passed on, on that node alone: no lease counts
// it, and the name of a Lock call that returned is never handed the lock
// again.
func (t *technique) NodeHandOff(node int, rkey, waiter string, fence uint64) {
	if node < 0 || node >= len(t.nodes) {
		return
	}
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil || w.rkey != rkey {
		t.passOnNodes(rkey, waiter, t.nodes[node:node+1])
		return
	}
	n := &w.nodes[node]
	n.handed, n.ever, w.handed = int64(fence), true, true
	if !w.delivered {
		t.decideGrant(waiter, w)
	}
}

// settleDelivered ends the hand-off delivered to waiter, if it is still
// recorded: the nodes that have not handed the waiter their copy may keep
// it in line, so it leaves them, passing on a copy handed to it meanwhile
// (abandon.lua), in the background. It runs when the lease is released,
// or NodeTimeout after the delivery.
func (t *technique) settleDelivered(waiter string) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil || !w.delivered {
		return
	}
	w.stopGather()
	delete(g.byWaiter, waiter)
	t.leaveNodes(w.rkey, waiter, w.ttl, t.nodesThatHanded(w, false))
	g.recycle(w)
}

// nodesThatHanded returns the nodes that handed w's waiter a copy of the
// lock at some point (ever), or, when handed is false, the others.
func (t *technique) nodesThatHanded(w *waiting, handed bool) []*node {
	var out []*node
	for i, n := range w.nodes {
		if n.ever == handed {
			out = append(out, t.nodes[i])
		}
	}
	return out
}

// closeGrants stops the timers of grants as the Locker closes; a waiter
// left in a line there is dropped once its Locker no longer listens.
func (t *technique) closeGrants() {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.byWaiter {
		w.stopGather()
	}
	clear(g.byWaiter)
}

// decideGrant hands the lock to the waiter once a quorum of nodes handed it
// theirs with one fencing token, or tells it to attempt when they did with
// tokens that differ, when its validity would be gone, or (gather) when
// too few did within NodeTimeout. g.mu is held.
func (t *technique) decideGrant(waiter string, w *waiting) {
	now := t.clock.now()
	counts := func(i int) bool {
		n := &w.nodes[i]
		return n.handed > 0 && n.refused != noRefusal && n.handed > n.refused && n.inflight == 0 && !n.tainted &&
			!(t.s.guard && t.nodes[i].excluded(now))
	}
	var top int64
	counted := 0
	for i, n := range w.nodes {
		if counts(i) {
			counted++
			top = max(top, n.handed)
		}
	}
	if counted == 0 {
		return
	}
	if counted < t.s.quorum {
		if w.gather == nil {
			rkey := w.rkey
			w.gather = time.AfterFunc(t.s.nodeTimeout, func() { t.line.Poke(rkey, waiter) })
		}
		return
	}
	atTop := 0
	for i, n := range w.nodes {
		if n.handed == top && counts(i) {
			atTop++
		}
	}
	validity := w.ttl - t.s.driftFor(w.ttl)
	w.stopGather()
	if atTop < t.s.quorum || time.Since(w.start) >= validity {
		// The waiter's next attempt takes the copies and settles the
		// fence; until it begins, what the nodes hand is recorded still.
		t.line.Poke(w.rkey, waiter)
		return
	}
	h := line.QuorumHandOff{Waiter: waiter, Fence: uint64(top), Start: w.start, Validity: validity, Try: w.try}
	if !t.line.HandOffQuorum(w.rkey, h) {
		// The waiter left its line meanwhile, or takes another hand-off.
		delete(t.grants.byWaiter, waiter)
		t.passOnNodes(w.rkey, waiter, t.nodes)
		return
	}
	w.delivered = true
	w.gather = time.AfterFunc(t.s.nodeTimeout, func() { t.settleDelivered(waiter) })
}

// stopGather stops the gather timer, if any. grants.mu is held.
func (w *waiting) stopGather() {
	if w.gather != nil {
		w.gather.Stop()
		w.gather = nil
	}
}

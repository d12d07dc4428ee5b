package redlock

import (
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
)

// grants collects the nodes' hand-offs to this Locker's waiting Lock
// calls, and hands a waiter the lock once a quorum did, or tells it to
// attempt (decideGrant): docs/redlock.md, "Hand-offs between Lockers".
type grants struct {
	mu       sync.Mutex
	byWaiter map[string]*waiting
	free     sync.Pool // *waiting of ended Lock calls, for the next ones
}

// waiting is one Lock call's state in grants, until it ends (LockEnded) or
// its delivered hand-off is settled (settleDelivered).
type waiting struct {
	rkey      string
	try       uint64        // the latest attempt's number
	start     time.Time     // when it was sent
	ttl       time.Duration // the TTL it asked for
	nodes     []nodeGrant
	gather    *time.Timer // pokes the waiter; once delivered, settles
	handed    bool        // some node handed a copy since attempt try began
	delivered bool        // the lock was handed to the waiter (HandOffQuorum)
}

// nodeGrant is what grants knows of one node for one waiter.
type nodeGrant struct {
	refused  int64 // the counter the node refused attempt try with (-1: none), or noRefusal
	handed   int64 // the latest hand-off's token since attempt try began (0: none)
	inflight int32 // the waiter's requests to the node not answered yet
	tainted  bool  // another attempt's request may have taken a copy here
	ever     bool  // the node handed the waiter a copy at all
}

// noRefusal marks a node that has not refused the attempt and queued the
// waiter.
const noRefusal = -2

// grantAttempt is one attempt as grants tracks it (zero: not tracked).
type grantAttempt struct {
	waiter string
	try    uint64 // 0 for a local hand-off's attempt
}

func (g *grants) newWaiting(rkey string, n int) *waiting {
	if w, ok := g.free.Get().(*waiting); ok {
		w.rkey = rkey
		return w
	}
	return &waiting{rkey: rkey, nodes: make([]nodeGrant, n)}
}

// drop forgets waiter's w, stops its timer and keeps it for newWaiting.
// g.mu is held.
func (g *grants) drop(waiter string, w *waiting) {
	w.stopGather()
	delete(g.byWaiter, waiter)
	clear(w.nodes)
	*w = waiting{nodes: w.nodes}
	g.free.Put(w)
}

// beginGrant records a Lock call's attempt a, sent at start; each
// request is in flight until answeredGrant.
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
		// A delivered hand-off this attempt overtook: it takes the copies.
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

// answeredGrant records node's answer v to ga (zero: never sent): a
// refusal that queued the waiter, or another attempt's that may have
// taken a copy (tainted).
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

// UseWaiters keeps w, the waiters grants hands locks to (line.Quorum).
func (t *technique) UseWaiters(w line.Waiters) { t.waiters = w }

// LockEnded forgets waiter, whose Lock call ended (line.Quorum), passing
// on the copies handed to it, unless a quorum's hand-off was delivered.
func (t *technique) LockEnded(rkey, waiter string) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil || w.rkey != rkey || w.delivered {
		return
	}
	if handed := t.nodesThatHanded(w, true); len(handed) > 0 {
		t.passOnNodes(w.rkey, waiter, handed)
	}
	g.drop(waiter, w)
}

// NodeHandOff records that node handed rkey's lock to waiter with token
// fence (line.Quorum); a copy for a Lock call that no longer waits is passed on.
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

// settleDelivered ends the hand-off delivered to waiter: it leaves the
// lines of the nodes that did not hand it theirs. It runs at the release,
// or NodeTimeout after the delivery.
func (t *technique) settleDelivered(waiter string) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil || !w.delivered {
		return
	}
	t.leaveNodes(w.rkey, waiter, w.ttl, t.nodesThatHanded(w, false))
	g.drop(waiter, w)
}

// nodesThatHanded returns the nodes that ever handed w's waiter a copy, or
// with handed false the others.
func (t *technique) nodesThatHanded(w *waiting, handed bool) []*node {
	var out []*node
	for i, n := range w.nodes {
		if n.ever == handed {
			out = append(out, t.nodes[i])
		}
	}
	return out
}

// closeGrants stops the timers as the Locker closes.
func (t *technique) closeGrants() {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.byWaiter {
		w.stopGather()
	}
	clear(g.byWaiter)
}

// decideGrant hands the lock to the waiter once a quorum of counted nodes
// handed it theirs with one token; else it tells the waiter to attempt
// (tokens differ, validity gone, or too few within NodeTimeout). g.mu is held.
func (t *technique) decideGrant(waiter string, w *waiting) {
	counts := func(i int) bool {
		n := &w.nodes[i]
		return n.handed > 0 && n.refused != noRefusal && n.handed > n.refused && n.inflight == 0 && !n.tainted &&
			!t.excluded(t.nodes[i])
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
	if counted < t.cfg.Quorum {
		if w.gather == nil {
			rkey := w.rkey
			w.gather = time.AfterFunc(t.cfg.NodeTimeout, func() { t.waiters.Poke(rkey, waiter) })
		}
		return
	}
	atTop := 0
	for i, n := range w.nodes {
		if n.handed == top && counts(i) {
			atTop++
		}
	}
	validity := w.ttl - t.cfg.driftFor(w.ttl)
	w.stopGather()
	if atTop < t.cfg.Quorum || time.Since(w.start) >= validity {
		// Its next attempt takes the copies and settles the fence.
		t.waiters.Poke(w.rkey, waiter)
		return
	}
	h := line.QuorumHandOff{Waiter: waiter, Fence: uint64(top), Start: w.start, Validity: validity, Try: w.try}
	if !t.waiters.HandOffQuorum(w.rkey, h) {
		// The waiter left its line meanwhile, or takes another hand-off.
		delete(t.grants.byWaiter, waiter)
		t.passOnNodes(w.rkey, waiter, t.nodes)
		return
	}
	w.delivered = true
	w.gather = time.AfterFunc(t.cfg.NodeTimeout, func() { t.settleDelivered(waiter) })
}

// stopGather stops the gather timer, if any. grants.mu is held.
func (w *waiting) stopGather() {
	if w.gather != nil {
		w.gather.Stop()
		w.gather = nil
	}
}

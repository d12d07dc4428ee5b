package redlock

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
)

// grants collects, for each of this Locker's waiting Lock calls, the
// hand-offs the nodes' releases made to it, and hands the lock to the
// waiter once a quorum of nodes did, without an acquire round of its own.
//
// A release on a node whose line has a live head sets that node's copy of
// the lock to the waiter's name, with the node's next fencing token, and
// sends the waiter's Locker a "handoff:<fence>:<waiter>" notice (handOn).
// A hand-off from node n counts for the waiter's latest attempt k when n
// refused k (so n queued the waiter) and the notice's token is larger than
// the counter n reported with that refusal: counters only grow, and only a
// SET of the lock (a hand-off's among them) increments one, so that
// hand-off came after n refused k, and n's copy was set, with the waiter's
// TTL, after k was sent. Once Q nodes count, the lock is the waiter's, its
// validity counted from k's start like an acquire round's. A hand-off from
// before k (k found it: the acquire takes a lock handed to its own Lock
// call) carries a token no larger than that counter, and one that arrives
// while k is under way waits for n's answer. An attempt begun after the
// hand-off reached the waiter takes the handed copies or finds them gone,
// so the engine drops the hand-off then (engine.QuorumHandOff.Try).
//
// When the counted tokens differ (a node missed increments) the fence
// would need a write-back, and when too few nodes handed the lock within
// NodeTimeout of the first (another waiter heads some lines, or nodes
// are slow), the waiter is told to attempt instead: its acquire round
// takes the copies handed to it and settles the fence as any round does.
type grants struct {
	mu       sync.Mutex
	byWaiter map[string]*waiting
}

// waiting is one waiting Lock call's state in grants.
type waiting struct {
	rkey  string
	try   uint64        // the latest attempt's number
	start time.Time     // when it was sent
	ttl   time.Duration // the TTL it asked for, which a hand-off sets
	// refused is, per node, the fencing counter the node reported when it
	// refused attempt try (-1: none), or noRefusal.
	refused []int64
	// handed is, per node, the token of the latest hand-off to the
	// waiter (0: none) since attempt try began; ever, whether the node
	// handed the waiter a copy at all: when the Lock call ends without
	// those copies (an attempt that won without reaching a node, the
	// breaker skipping it, leaves its copy there), endGrant passes them on.
	handed []int64
	ever   []bool
	// gather pokes the waiter when too few nodes handed it the lock in
	// time; nil while no hand-off counts.
	gather *time.Timer
}

// noRefusal marks a node whose answer to the attempt was not a refusal
// that queued the waiter (yet).
const noRefusal = -2

// tryOf returns the attempt number of a Lock call's token (its name, "."
// and the number; engine.Attempt.Waiter), or false for any other token (a
// local hand-off's, <name>.p<n>).
func tryOf(a engine.Attempt) (uint64, bool) {
	n, ok := strings.CutPrefix(a.Token, a.Waiter+".")
	if !ok {
		return 0, false
	}
	try, err := strconv.ParseUint(n, 10, 64)
	return try, err == nil && try > 0
}

// begin records that a's attempt, a Lock call's, is sent now (at start):
// the hand-offs and refusals of its earlier attempts no longer count. It
// reports whether the waiter was new to grants.
func (t *technique) beginGrant(a engine.Attempt, start time.Time) (try uint64, isNew bool) {
	try, ok := tryOf(a)
	if !a.Waits || !ok {
		return 0, false
	}
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[a.Waiter]
	if w == nil {
		if g.byWaiter == nil {
			g.byWaiter = map[string]*waiting{}
		}
		w = &waiting{rkey: a.Key, refused: make([]int64, len(t.nodes)), handed: make([]int64, len(t.nodes)), ever: make([]bool, len(t.nodes))}
		g.byWaiter[a.Waiter] = w
		isNew = true
	}
	w.try, w.start, w.ttl = try, start, a.TTL
	for i := range w.refused {
		w.refused[i], w.handed[i] = noRefusal, 0
	}
	w.stopGather()
	return try, isNew
}

// refusedGrant records that node refused the waiter's attempt try, which
// queued it there, reporting fence, its fencing counter then.
func (t *technique) refusedGrant(waiter string, try uint64, node int, fence int64) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.byWaiter[waiter]; w != nil && w.try == try {
		w.refused[node] = fence
		t.decideGrant(waiter, w)
	}
}

// endGrant forgets the waiter: it took the lock by an attempt of its own,
// or gave up. The copies of the lock nodes handed it are passed on (a
// copy its attempt took holds the attempt's token by now, and is left
// alone).
func (t *technique) endGrant(waiter string) {
	g := &t.grants
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.byWaiter[waiter]
	if w == nil {
		return
	}
	w.stopGather()
	delete(g.byWaiter, waiter)
	var handed []*node
	for i, ever := range w.ever {
		if ever {
			handed = append(handed, t.nodes[i])
		}
	}
	if len(handed) > 0 {
		t.passOnNodes(w.rkey, waiter, handed)
	}
}

// NodeHandOff records that node handed the lock of rkey to waiter with
// fencing token fence (engine.QuorumHandOffs). A copy handed to a Lock
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
	w.handed[node], w.ever[node] = int64(fence), true
	t.decideGrant(waiter, w)
}

// decideGrant hands the lock to the waiter once a quorum of nodes handed it
// theirs with one fencing token, or tells it to attempt when they did with
// tokens that differ, when its validity would be gone, or (gather) when
// too few did within NodeTimeout. g.mu is held.
func (t *technique) decideGrant(waiter string, w *waiting) {
	now := t.clock.now()
	var top int64
	counted := 0
	for i, f := range w.handed {
		if f > 0 && w.refused[i] != noRefusal && f > w.refused[i] && !(t.s.guard && t.nodes[i].excluded(now)) {
			counted++
			top = max(top, f)
		}
	}
	if counted == 0 {
		return
	}
	if counted < t.s.quorum {
		if w.gather == nil {
			rkey := w.rkey
			w.gather = time.AfterFunc(t.s.nodeTimeout, func() { t.e.Poke(rkey, waiter) })
		}
		return
	}
	atTop := 0
	var leave []*node
	for i, f := range w.handed {
		switch {
		case f == top && w.refused[i] != noRefusal && f > w.refused[i]:
			atTop++
		default:
			leave = append(leave, t.nodes[i])
		}
	}
	validity := w.ttl - t.s.driftFor(w.ttl)
	w.stopGather()
	if atTop < t.s.quorum || time.Since(w.start) >= validity {
		// The waiter's next attempt takes the copies and settles the
		// fence; until it begins, what the nodes hand is recorded still.
		t.e.Poke(w.rkey, waiter)
		return
	}
	delete(t.grants.byWaiter, waiter)
	h := engine.QuorumHandOff{Waiter: waiter, Fence: uint64(top), Start: w.start, Validity: validity, Try: w.try}
	if !t.e.HandOffQuorum(w.rkey, h) {
		// The waiter left its line meanwhile, or takes another hand-off.
		t.passOnNodes(w.rkey, waiter, t.nodes)
		return
	}
	// The nodes that did not count may still keep the waiter in line (or
	// hand it their copy later): it leaves them, passing on a copy handed
	// to it (abandon.lua).
	t.leaveNodes(w.rkey, waiter, w.ttl, leave)
}

// stopGather stops the gather timer, if any. grants.mu is held.
func (w *waiting) stopGather() {
	if w.gather != nil {
		w.gather.Stop()
		w.gather = nil
	}
}

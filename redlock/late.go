package redlock

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// lateRounds tracks, by token, the won acquire rounds that still wait for
// slow nodes. A release sent while a node's SET is still on its way can
// reach that node first, find nothing to delete, and be followed by the
// SET: the node would then hold a lock nobody owns until its TTL runs out.
// For each node of such a round, whichever of the two answers comes second
// (the acquire's yes, or the release's "not ours") deletes the lock there
// again, over its own connection, after both requests were processed.
type lateRounds struct {
	mu      sync.Mutex
	byToken map[string]*round
}

// lateState is a round's part in lateRounds; lateRounds.mu guards token
// and finished. track sets key, token and nodes before the round's
// decision is published, and nothing changes them afterwards.
type lateState struct {
	key      string // the lock's Redis key
	token    string // the key under which the round is tracked, "" when it is not
	finished bool   // every node has answered
	// nodes holds, by node index, what was seen of that node: nodeYes
	// (the acquire's yes arrived) or nodeMissed (a release found nothing
	// to delete there); nil when the round is not tracked.
	nodes []atomic.Int32
	buf   [8]atomic.Int32 // nodes' room up to 8 nodes, in the round itself
}

// Per-node states of a tracked round.
const (
	nodeYes    = 1
	nodeMissed = 2
)

// track registers r, a won round that set key to token on up to n nodes,
// unless every node answered already. Call it before publishing the
// decision.
func (l *lateRounds) track(key, token string, r *round, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.late.finished {
		return
	}
	if l.byToken == nil {
		l.byToken = map[string]*round{}
	}
	var nodes []atomic.Int32
	if n <= len(r.late.buf) {
		nodes = r.late.buf[:n]
	} else {
		nodes = make([]atomic.Int32, n)
	}
	r.late.key, r.late.token, r.late.nodes = key, token, nodes
	l.byToken[token] = r
}

// finish records that every node of r answered, and stops tracking it.
func (l *lateRounds) finish(r *round) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.late.finished = true
	if r.late.token != "" && l.byToken[r.late.token] == r {
		delete(l.byToken, r.late.token)
	}
}

// lookup returns the tracked round of token, or nil. A release calls it
// before it sends anything: a round no longer tracked has had all its
// answers, so every SET of it came before the release.
func (l *lateRounds) lookup(token string) *round {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byToken[token]
}

// yes records that node i answered yes to the tracked round r, and reports
// whether a release already found nothing to delete there: the caller
// must then delete the lock again.
func (s *lateState) yes(i int) bool {
	if s.nodes == nil {
		return false
	}
	return !s.nodes[i].CompareAndSwap(0, nodeYes) && s.nodes[i].Load() == nodeMissed
}

// missed records that a release found nothing to delete on node i, and
// reports whether the round's yes from that node already arrived: the
// caller must then delete the lock again.
func (s *lateState) missed(i int) bool {
	if s.nodes == nil {
		return false
	}
	return !s.nodes[i].CompareAndSwap(0, nodeMissed) && s.nodes[i].Load() == nodeYes
}

// pointAcquireOn names the fault point an acquire reaches on node i just
// before it sends its request there ("redlock/acquire:node-<i>"). Tests
// gate it to make a node answer after the decision.
func pointAcquireOn(i int) string { return "redlock/acquire:node-" + strconv.Itoa(i) }

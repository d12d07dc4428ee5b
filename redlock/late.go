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
// Release marks the token's round as overtaken before it sends anything,
// and the node's goroutine takes back a late SET of an overtaken round.
type lateRounds struct {
	mu      sync.Mutex
	byToken map[string]*round
}

// lateState is a round's part in lateRounds; mu guards token and finished.
type lateState struct {
	token     string      // the key under which the round is tracked, "" when it is not
	finished  bool        // every node has answered
	overtaken atomic.Bool // a release of the token was sent before every node answered
	takeBack  undoOp      // deletes the round's lock on one node
}

// track registers r, a won round of token, unless every node answered
// already. takeBack deletes the lock on one node.
func (l *lateRounds) track(token string, r *round, takeBack undoOp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.late.finished {
		return
	}
	if l.byToken == nil {
		l.byToken = map[string]*round{}
	}
	r.late.token, r.late.takeBack = token, takeBack
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

// overtake marks the round of token, if it still waits for nodes, as
// overtaken by a release. Call it before sending the release.
func (l *lateRounds) overtake(token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.byToken[token]; ok {
		r.late.overtaken.Store(true)
	}
}

// pointAcquireOn names the fault point an acquire reaches on node i just
// before it sends its request there ("redlock/acquire:node-<i>"). Tests
// gate it to make a node answer after the decision.
func pointAcquireOn(i int) string { return "redlock/acquire:node-" + strconv.Itoa(i) }

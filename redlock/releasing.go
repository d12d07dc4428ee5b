package redlock

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// releasing tracks, by lock key, this Locker's releases that succeeded
// (a quorum deleted the lock, so the lease is spent) while some nodes had
// not answered yet. An acquire of the same key that follows at once, on
// other connections, can reach such a node before the release does, be
// refused by the released lock there, and leave that node's fencing
// counter behind (which costs a later acquire its write-back round) and
// itself in the node's line (which costs a call to leave it). Instead, on
// each node whose release is still on its way, the acquire script first
// deletes the released lock, as the release would (the hand-off's "release
// first", ARGV[7]): only a lock that still holds the released token, which
// nobody owns any more, is deleted.
type releasing struct {
	mu    sync.Mutex
	byKey map[string]*pendingRelease
}

// pendingRelease is one release round in releasing. token is what it
// deletes; pending marks, by node index, the nodes whose answer has not
// come yet. releasing.mu guards tracked and finished.
type pendingRelease struct {
	key, token string
	pending    []atomic.Bool
	tracked    bool           // in byKey
	finished   bool           // every node answered: never tracked again
	buf        [8]atomic.Bool // pending's room up to 8 nodes: one allocation
}

// newPendingRelease returns the record of a release of token at key over
// n nodes, every node pending, not tracked yet.
func newPendingRelease(key, token string, n int) *pendingRelease {
	p := &pendingRelease{key: key, token: token}
	if n <= len(p.buf) {
		p.pending = p.buf[:n]
	} else {
		p.pending = make([]atomic.Bool, n)
	}
	for i := range p.pending {
		p.pending[i].Store(true)
	}
	return p
}

// answered records that node i answered the release.
func (p *pendingRelease) answered(i int) { p.pending[i].Store(false) }

// track makes p the key's pending release, unless every node answered
// already. Call it only once the release succeeded.
func (r *releasing) track(p *pendingRelease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.finished {
		return
	}
	if r.byKey == nil {
		r.byKey = map[string]*pendingRelease{}
	}
	p.tracked = true
	r.byKey[p.key] = p
}

// finish records that every node answered p, and stops tracking it.
func (r *releasing) finish(p *pendingRelease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p.finished = true
	if p.tracked && r.byKey[p.key] == p {
		delete(r.byKey, p.key)
	}
}

// lookup returns key's tracked pending release, or nil.
func (r *releasing) lookup(key string) *pendingRelease {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byKey[key]
}

// pointReleaseOn names the fault point a release reaches on node i just
// before it sends its request there ("redlock/release:node-<i>"). Tests
// gate it to make a node answer after the decision.
func pointReleaseOn(i int) string { return "redlock/release:node-" + strconv.Itoa(i) }

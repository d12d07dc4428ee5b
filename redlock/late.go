package redlock

import (
	"strconv"
	"sync/atomic"

	"github.com/lockzoo/lockzoo/internal/inflight"
)

// lateRounds tracks, by token, won acquire rounds still waiting for slow
// nodes: a release that reaches such a node before its SET finds nothing;
// whichever answer comes second (the SET's yes, or the release's "not
// ours") deletes the lock there again.
type lateRounds = inflight.Map[*round]

// lateState is a round's part in lateRounds; watch sets it before the
// round's decision is published.
type lateState struct {
	inflight.Entry
	key   string
	nodes []atomic.Int32 // by node: nodeYes or nodeMissed; nil: not watched
	buf   [8]atomic.Int32
}

func (r *round) Tracking() *inflight.Entry { return &r.late.Entry }

// Per-node states of a watched round.
const (
	nodeYes    = 1 // the acquire's yes arrived
	nodeMissed = 2 // a release found nothing to delete
)

// watch readies the round of a lock of key over n nodes for lateRounds.
func (s *lateState) watch(key string, n int) {
	s.key, s.nodes = key, room(s.buf[:], n)
}

// yes records node i's yes, and reports whether a release already missed
// there: the caller must delete the lock again.
func (s *lateState) yes(i int) bool {
	return s.nodes != nil && !s.nodes[i].CompareAndSwap(0, nodeYes) && s.nodes[i].Load() == nodeMissed
}

// missed records that a release found nothing to delete on node i, and
// reports whether the yes already arrived: the caller must delete again.
func (s *lateState) missed(i int) bool {
	return s.nodes != nil && !s.nodes[i].CompareAndSwap(0, nodeMissed) && s.nodes[i].Load() == nodeYes
}

// releasing tracks, by lock key, this Locker's successful releases whose
// nodes have not all answered: an acquire of the key that overtakes one on
// such a node deletes the released lock first, rather than being refused.
type releasing = inflight.Map[*pendingRelease]

// pendingRelease is one release round in releasing: pending marks the
// nodes whose answer has not come yet.
type pendingRelease struct {
	inflight.Entry
	key, token string
	pending    []atomic.Bool
	buf        [8]atomic.Bool
}

func (p *pendingRelease) Tracking() *inflight.Entry { return &p.Entry }

// newPendingRelease returns a release of token at key over n nodes, every
// node pending.
func newPendingRelease(key, token string, n int) *pendingRelease {
	p := &pendingRelease{key: key, token: token}
	p.pending = room(p.buf[:], n)
	for i := range p.pending {
		p.pending[i].Store(true)
	}
	return p
}

// answered records that node i answered the release.
func (p *pendingRelease) answered(i int) { p.pending[i].Store(false) }

// room returns buf[:n], or a new slice when buf is too short.
func room[T any](buf []T, n int) []T {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]T, n)
}

// pointAcquireOn and pointReleaseOn name the fault points before a request
// to node i.
func pointAcquireOn(i int) string { return "redlock/acquire:node-" + strconv.Itoa(i) }

func pointReleaseOn(i int) string { return "redlock/release:node-" + strconv.Itoa(i) }

package redlock

// What a round leaves behind once its call returned: answers that come
// late (lateRounds, releasing) and releases owed to nodes that did not
// answer (owe).

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/lockzoo/lockzoo/internal/inflight"
	"github.com/lockzoo/lockzoo/internal/redisconn"
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

const ( // a watched round's states by node
	nodeYes    = 1 // the acquire's yes arrived
	nodeMissed = 2 // a release found nothing to delete
)

// watch readies the round of a lock of key over n nodes for lateRounds.
func (s *lateState) watch(key string, n int) {
	s.key, s.nodes = key, room(s.buf[:], n)
}

// mark records on node i our SET's yes (nodeYes) or a release that found
// nothing to delete (nodeMissed), and reports whether the other came
// first: then the caller deletes the lock there again.
func (s *lateState) mark(i int, state int32) bool {
	return s.nodes != nil && !s.nodes[i].CompareAndSwap(0, state) && s.nodes[i].Load() == nodeYes+nodeMissed-state
}

// releasing tracks, by lock key, this Locker's successful releases whose
// nodes have not all answered: an acquire of the key that overtakes one on
// such a node deletes the released lock first, rather than being refused.
type releasing = inflight.Map[*pendingRelease]

// pendingRelease is one release round in releasing.
type pendingRelease struct {
	inflight.Entry
	key, token string
	answered   []atomic.Bool // by node: its answer came
	buf        [8]atomic.Bool
}

func (p *pendingRelease) Tracking() *inflight.Entry { return &p.Entry }

// newPendingRelease returns a release of token at key over n nodes.
func newPendingRelease(key, token string, n int) *pendingRelease {
	p := &pendingRelease{key: key, token: token}
	p.answered = room(p.buf[:], n)
	return p
}

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

// plainRelease, as the release script's second argument, deletes the lock
// and tells the head without handing it on: an owed release paid late may
// find a head that is gone.
const plainRelease = "-"

// requeued names the waiter an owed undo puts back in rkey's line.
type requeued struct{ rkey, waiter, member string }

// owe records that n is owed the release of token at keys, with requeue
// (see releaseOn) or as a plainRelease.
func (t *technique) owe(n *node, keys []any, token string, requeue ...any) {
	if len(requeue) == 0 {
		requeue = []any{plainRelease}
	}
	kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
	t.oweCall(n, t.release, append(kv, requeue...), nil)
}

// oweCall records that n is owed script with kv (read-only) until the
// longest TTL from now (owed.Payer). Each send goes through n's breaker.
// For a waiter's undo (q), a waiter that left since leaves again once it
// is paid (requeueOn).
func (t *technique) oweCall(n *node, script *redisconn.Script, kv []any, q *requeued) {
	pay := func(ctx context.Context) (sent, lost bool) {
		ok, probe := n.br.Admit()
		if !ok {
			return false, false
		}
		l, _ := t.call(ctx, n, probe, func(ctx context.Context, l *link) answer {
			a := compareVote(t.evalArgs(ctx, l, script, kv))
			if q != nil && !l.lost && t.left.Has(q.waiter) {
				t.leaveOp(q.rkey, q.waiter, q.member)(ctx, l) // it gave up since
			}
			return a
		})
		return true, l.lost
	}
	t.payer.Owe(&n.owed, pay, time.Now().Add(time.Duration(t.maxTTL.Load())))
}

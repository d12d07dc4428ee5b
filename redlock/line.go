package redlock

import (
	"context"
	_ "embed"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
)

//go:embed release.lua
var releaseSource string

// LineStale is how long a waiter in Lock may go without an attempt before
// a node drops it from its line of waiters (protocol.Stale), unless its
// Locker listens for notices on that node (LineListened). Lock attempts
// at least every strategy.DefaultRetryMax with the default Retry until it
// listens, and at least every LineStale/2 whatever the Retry policy, so a
// live waiter keeps its place; a lock kept free for a waiter whose process
// died waits at most LineStale.
const LineStale = protocol.Stale

// LineListened is how long a waiter whose Locker listens for notices on a
// node (PUBSUB NUMSUB counts its subscription there) may go without an
// attempt before that node drops it (protocol.Listened). A waiter that
// every refusing node saw listening sleeps until a notice wakes it, or
// LineListened/2 passes, so waiting costs each node one attempt per
// waiter per LineListened/2; a lock kept free for a waiter whose process
// froze with its connections open waits at most LineListened.
const LineListened = protocol.Listened

// Abandon takes a waiter that gave up out of every node's line, and
// passes on each node's copy of the lock that a release handed to it
// meanwhile (line.AbandonSource), waiting at most until ctx ends. It
// remembers the waiter as gone first (leftWaiters), so that an undo of
// one of its attempts that reaches a node after this leave does not put
// it back in line. A node the leave does not reach (the breaker skipped
// it, or the call lost its reply) is owed it (oweLeave), and gets it as
// soon as it answers again. It returns nil: the engine need not try
// again, redlock keeps its lines itself.
func (t *technique) Abandon(ctx context.Context, a engine.Attempt) error {
	t.left.add(a.Waiter, time.Now(), t.leftHorizon())
	member := lineMember(a)
	r := t.fanOut(ctx, t.nodes, t.leaveOp(a.Key, a.Waiter, member), nil)
	defer r.decide(false)
	for _, n := range r.unsent {
		t.oweLeave(n, a.Key, a.Waiter, member)
	}
	for range t.nodes {
		select {
		case <-r.answers:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// leaveOn returns the step that takes the winner of an acquire round (a)
// out of the line of a node that refused it, where the refusal queued it
// (or whose answer was lost after the request may have run, which may
// have queued it): left there, it would keep that node for itself until
// it went stale, and could be handed that node's copy of the lock, which
// nobody would release. It runs after the node's answer, so after the
// request on that node; a
// copy of the lock a release handed to the waiter on that node since is
// passed on. What it sends is built only when it runs: most rounds have
// no refusal.
func (t *technique) leaveOn(a engine.Attempt) undoOp {
	return func(ctx context.Context, l *link) {
		_ = t.leaveOp(a.Key, a.Waiter, lineMember(a))(ctx, l)
	}
}

// leaveNodes takes the waiter named waiter, which a quorum of other nodes
// handed the lock of rkey (grants), out of the lines of nodes, in the
// background: each passes on its copy of the lock if it handed it to the
// waiter, which the waiter's lease does not count.
func (t *technique) leaveNodes(rkey, waiter string, ttl time.Duration, nodes []*node) {
	if len(nodes) == 0 {
		return
	}
	member := protocol.Member{TTL: ttl, Locker: t.line.ID(), Waiter: waiter}.String()
	t.fanOut(context.Background(), nodes, t.leaveOp(rkey, waiter, member), nil).decide(false)
}

// passOnNodes releases, in the background, the copies of the lock of rkey
// that releases handed to waiter on nodes, a Lock call of this Locker that
// no longer waits: each node passes its copy on (release.lua, which hands
// it to the head of its line) if it still holds the waiter's name; a
// release that cannot reach a node is owed to it (releaseOn).
func (t *technique) passOnNodes(rkey, waiter string, nodes []*node) {
	keys := keysOf(rkey)
	release := func(ctx context.Context, l *link) answer {
		t.releaseOn(ctx, l, keys, waiter)
		return answer{vote: voteYes}
	}
	t.fanOut(context.Background(), nodes, release, nil).decide(false)
}

// leaveOp is one node's part of a waiter leaving the line (abandon.lua).
// A leave that loses its reply may not have run: it is owed to the node
// (oweLeave).
func (t *technique) leaveOp(rkey, waiter, member string) nodeOp {
	return func(ctx context.Context, l *link) answer {
		a := compareVote(t.evalScript(ctx, l, t.abandon, keysOf(rkey), member, waiter, protocol.Channel(rkey)))
		if l.lost {
			t.oweLeave(l.n, rkey, waiter, member)
		}
		return a
	}
}

// lineMember is a's waiter in the nodes' lines (protocol.Member).
func lineMember(a engine.Attempt) string {
	return protocol.Member{TTL: a.TTL, Locker: a.Locker, Waiter: a.Waiter}.String()
}

package redlock

import (
	"context"
	_ "embed"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
)

var (
	//go:embed release.lua
	releaseSource string
	//go:embed abandon.lua
	abandonSource string
)

// LineStale is how long a waiter in Lock may go without an attempt before
// a node drops it from its line of waiters. Lock attempts at least every
// strategy.DefaultRetryMax with the default Retry, and at least every
// LineStale/2 whatever the Retry policy, so a live waiter keeps its place;
// a lock kept free for a waiter that died waits at most LineStale.
const LineStale = 250 * time.Millisecond

// lineKeys returns the keys of rkey's line of waiters on a node: the
// tickets (when each Lock call began, in µs of its client's clock) and the
// last time each waiter was seen. Both expire when the line empties.
func lineKeys(rkey string) (line, seen string) {
	return "lockzoo:line:" + rkey, "lockzoo:seen:" + rkey
}

// Abandon takes a waiter that gave up out of every node's line, waiting at
// most until ctx ends. Failures are left alone: a waiter left in a line is
// dropped after LineStale.
func (t *technique) Abandon(ctx context.Context, a engine.Attempt) {
	r := t.leave(ctx, t.nodes, a)
	defer r.decide(false)
	for range t.nodes {
		select {
		case <-r.answers:
		case <-ctx.Done():
			return
		}
	}
}

// leaveLines takes the winner of an acquire round (a, tallied in tl) out of
// the lines of the nodes that did not grant it the lock: those that
// refused it queued it, and those that had not answered at the decision
// may still refuse and queue it. Left there, it would keep those nodes for
// itself until it went stale. The calls run in the background (see
// fanOut); nobody waits for them.
func (t *technique) leaveLines(ctx context.Context, a engine.Attempt, tl *tally) {
	var buf [8]*node // no allocation up to 8 nodes
	others := buf[:0]
	for i, n := range t.nodes {
		if tl.granted == nil || !tl.granted[i] {
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		t.leave(ctx, others, a).decide(false)
	}
}

// leave starts the round that takes a's waiter out of nodes' lines.
func (t *technique) leave(ctx context.Context, nodes []*node, a engine.Attempt) *round {
	line, seen := lineKeys(a.Key)
	keys := []any{line, seen}
	member := a.Locker + "/" + a.Waiter
	op := func(ctx context.Context, n *node, c redis.Conn) answer {
		return compareVote(t.evalScript(ctx, n, c, t.abandon, keys, member))
	}
	return t.fanOut(ctx, nodes, op, nil)
}

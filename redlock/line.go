package redlock

import (
	"context"
	_ "embed"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
)

var (
	//go:embed release.lua
	releaseSource string
	//go:embed abandon.lua
	abandonSource string
)

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

// Abandon takes a waiter that gave up out of every node's line, waiting at
// most until ctx ends. Failures are left alone: a waiter left in a line is
// dropped after LineStale (LineListened while its Locker listens).
func (t *technique) Abandon(ctx context.Context, a engine.Attempt) {
	k := protocol.KeysOf(a.Key)
	keys, member := []any{k.Line, k.Seen}, lineMember(a)
	leave := func(ctx context.Context, l *link) answer {
		return compareVote(t.evalScript(ctx, l, t.abandon, keys, member))
	}
	r := t.fanOut(ctx, t.nodes, leave, nil)
	defer r.decide(false)
	for range t.nodes {
		select {
		case <-r.answers:
		case <-ctx.Done():
			return
		}
	}
}

// leaveOn returns the step that takes the winner of an acquire round (a)
// out of the line of a node that refused it, where the refusal queued it:
// left there, it would keep that node for itself until it went stale. It
// runs after the refusal's answer, so after the refusal on that node.
// What it sends is built only when it runs: most rounds have no refusal.
func (t *technique) leaveOn(a engine.Attempt) undoOp {
	return func(ctx context.Context, l *link) {
		k := protocol.KeysOf(a.Key)
		_, _ = t.evalScript(ctx, l, t.abandon, []any{k.Line, k.Seen}, lineMember(a))
	}
}

// lineMember is a's waiter in the nodes' lines (protocol.Member).
func lineMember(a engine.Attempt) string {
	return protocol.Member{TTL: a.TTL, Locker: a.Locker, Waiter: a.Waiter}.String()
}

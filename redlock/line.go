package redlock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

//go:embed release.lua
var releaseSource string

// LineStale is how long a waiter may go without an attempt before a node
// drops it from its line, LineListened when its Locker listens for notices
// there. Lock attempts at least every LineStale/2.
const (
	LineStale    = protocol.Stale
	LineListened = protocol.Listened
)

// Abandon takes a waiter that gave up out of every node's line, passing on
// a copy of the lock handed to it meanwhile; it waits at most until ctx
// ends, and a node the leave does not reach is owed it. It returns nil.
func (t *technique) Abandon(ctx context.Context, a engine.Attempt) error {
	t.left.Add(a.Waiter, time.Now(), t.leftHorizon())
	member := lineMember(a)
	r := t.fanOut(ctx, t.nodes, t.leaveOp(a.Key, a.Waiter, member), nil, nil)
	defer r.decide(false)
	for _, n := range r.unsent {
		t.oweCall(n, t.abandon, t.leaveArgs(a.Key, a.Waiter, member), nil)
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

// leaveNodes takes waiter, which a quorum of other nodes handed rkey's lock
// (grants), out of the lines of nodes in the background.
func (t *technique) leaveNodes(rkey, waiter string, ttl time.Duration, nodes []*node) {
	if len(nodes) == 0 {
		return
	}
	member := protocol.Member{TTL: ttl, Locker: t.args.Name(), Waiter: waiter}.String()
	t.fanOut(context.Background(), nodes, t.leaveOp(rkey, waiter, member), nil, nil).decide(false)
}

// passOnNodes releases in the background the copies of rkey's lock that
// nodes handed to waiter, which no longer waits: each passes it on.
func (t *technique) passOnNodes(rkey, waiter string, nodes []*node) {
	keys := keysOf(rkey)
	release := func(ctx context.Context, l *link) answer {
		t.releaseOn(ctx, l, keys, waiter)
		return answer{vote: voteYes}
	}
	t.fanOut(context.Background(), nodes, release, nil, nil).decide(false)
}

// leaveOp is one node's part of a waiter leaving the line (abandon.lua); a
// leave that loses its reply is owed.
func (t *technique) leaveOp(rkey, waiter, member string) nodeOp {
	return func(ctx context.Context, l *link) answer {
		kv := t.leaveArgs(rkey, waiter, member)
		a := compareVote(t.evalArgs(ctx, l, t.abandon, kv))
		if l.lost {
			t.oweCall(l.n, t.abandon, kv, nil)
		}
		return a
	}
}

// leaveArgs is abandon.lua's arguments for waiter leaving rkey's line.
func (t *technique) leaveArgs(rkey, waiter, member string) []any {
	return append(append(t.abandon.Args(7), keysOf(rkey)...), member, waiter, protocol.Channel(rkey))
}

// lineMember is a's waiter in the nodes' lines.
func lineMember(a engine.Attempt) string {
	return protocol.Member{TTL: a.TTL, Locker: a.Locker, Waiter: a.Waiter}.String()
}

// requeueOn takes back a waiter's failed attempt a on l's node: it deletes
// a's lock and puts the waiter back in line, unless it gave up (t.left),
// before or meanwhile. A requeue that loses its reply is owed.
func (t *technique) requeueOn(ctx context.Context, l *link, keys []any, a engine.Attempt) {
	if t.left.Has(a.Waiter) {
		t.releaseOn(ctx, l, keys, a.Token, plainRelease)
		return
	}
	member := lineMember(a)
	kv := append(append(t.release.Args(7), keys...), a.Token, a.Arrived.UnixMicro(), member)
	if !l.lost {
		_, _ = t.evalArgs(ctx, l, t.release, kv)
	}
	if l.lost {
		t.oweCall(l.n, t.release, kv, &requeued{rkey: a.Key, waiter: a.Waiter, member: member})
		return
	}
	if t.left.Has(a.Waiter) {
		t.leaveOp(a.Key, a.Waiter, member)(ctx, l)
	}
}

// leftHorizon is how long a waiter that left is remembered: an owed
// requeue is paid within the longest TTL, an undo within NodeTimeout.
func (t *technique) leftHorizon() time.Duration {
	return time.Duration(t.maxTTL.Load()) + 2*t.cfg.NodeTimeout
}

// HandOff hands h's lock to next, a waiter of the same Locker, in one
// round: every node's acquire script deletes h's lock, then makes next's
// attempt. It returns what next got, and the release's outcome: nil once
// a quorum deleted h's lock (or no quorum can still hold it),
// strategy.ErrNotHeld when too many did not hold it, else the failures.
func (t *technique) HandOff(ctx context.Context, h engine.Held, next engine.Attempt) (line.Passed, error) {
	g, r, tl, err := t.acquire(ctx, next, h.Value)
	passed := line.Passed{Taken: err == nil, Value: g.Value, Fence: g.Fence, Validity: g.Validity}
	if r == nil {
		return passed, t.Release(ctx, h)
	}
	for tl.handed < tl.quorum && tl.pending() > 0 && tl.notHanded <= tl.n-tl.quorum {
		select {
		case a := <-r.answers:
			tl.add(a)
		case <-ctx.Done():
			return passed, fmt.Errorf("release: %w", ctx.Err())
		}
	}
	switch {
	case tl.handed >= tl.quorum:
		return passed, nil
	case tl.notHanded > tl.n-tl.quorum:
		return passed, fmt.Errorf("release: %w: %d of %d nodes did not hold it", strategy.ErrNotHeld, tl.notHanded, tl.n)
	case tl.handed > 0 && tl.pending() == 0 && tl.handed+tl.notHanded > tl.n-tl.quorum:
		return passed, nil // fewer than a quorum may still hold it
	}
	return passed, fmt.Errorf("release: deleted on %d of %d nodes (quorum %d), %d did not hold it: %w",
		tl.handed, tl.n, tl.quorum, tl.notHanded, lockerr.Joined(tl.errs))
}

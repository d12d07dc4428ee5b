package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/background"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/owed"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/recent"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/restartguard"
	"github.com/lockzoo/lockzoo/strategy"
)

// technique is redlock's scripts and state; the engine calls it concurrently.
type technique struct {
	nodes []*node
	cfg   Config // filled in; cfg.Config is the engine's
	guard bool   // the restart guard is on
	// acquire.lua, raise.lua (the fencing write-back), release.lua, the
	// line's abandon.lua and compare-and-PEXPIRE.
	acquireScript, raise, release, abandon, extend *redisconn.Script
	waiters                                        line.Waiters // the Locker's waiters, which grants hands locks to (UseWaiters)
	grants                                         grants
	rg                                             *restartguard.Guard
	maxTTL                                         atomic.Int64       // the longest TTL asked for, in ns
	bg                                             background.Tracker // background goroutines (Locker.Wait)
	late                                           lateRounds         // won acquire rounds still waiting for nodes
	releasing                                      releasing          // successful releases still waiting for nodes
	args                                           engine.LockerArgs  // the Locker's TTL and name, boxed once
	payer                                          owed.Payer         // pays the releases the nodes are owed
	left                                           recent.Set         // Lock calls that gave up (Abandon): a late undo requeues nothing
	sharded                                        bool               // every node a Redis Cluster: notices on shard channels
}

// keysOf is the lock key's keys as the scripts take them.
func keysOf(key string) []any { return protocol.KeysOf(key).All() }

// heldKeys is h's keys, boxed at its acquire, or built.
func heldKeys(h engine.Held) []any {
	if len(h.Keys) == 4 {
		return h.Keys
	}
	return keysOf(h.Key)
}

// Release runs compare-and-delete on every node. It returns nil once a
// quorum deleted the lock, or every node answered and it is gone all the
// same; ErrNotHeld once refusals rule a quorum out; else the failures. A
// spent lease's release that was skipped or lost on a node is owed to it.
func (t *technique) Release(ctx context.Context, h engine.Held) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if h.Keys == nil {
		t.settleDelivered(h.Value) // a lock handed off by the nodes (grants)
	}
	late := t.late.Lookup(h.Value)
	kv := append(append(t.release.Args(5), heldKeys(h)...), h.Value)
	pending := newPendingRelease(h.Key, h.Value, len(t.nodes))
	del := func(ctx context.Context, l *link) answer {
		n := l.n
		defer pending.answered[n.index].Store(true)
		if err := fault.At(ctx, n.releasePoint); err != nil {
			return answer{vote: voteFailed, err: err} // nothing was sent
		}
		a := compareVote(t.evalArgs(ctx, l, t.release, kv))
		if a.vote == voteNo && late != nil && late.late.mark(n.index, nodeMissed) {
			// Our acquire's SET came after this release: delete again.
			a = compareVote(t.evalArgs(ctx, l, t.release, kv))
		}
		return a
	}
	r := t.fanOut(ctx, t.nodes, del, nil, pending)
	defer func() { t.releaseDone(r, err == nil || errors.Is(err, strategy.ErrNotHeld)) }()
	tl := newTally(len(t.nodes), t.cfg.Quorum)
	cause := r.collectInto(ctx, &tl, nil)
	if cause == nil && tl.won() && tl.pending() > 0 {
		t.releasing.Track(h.Key, pending) // spent, with nodes still to answer
	}
	r.decide(cause != nil || !tl.won())
	if cause == nil && !tl.won() {
		cause = r.settle(ctx, &tl, true)
		if cause == nil && !tl.refusedByQuorum() && tl.released() {
			return nil
		}
	}
	if cause != nil || !tl.won() {
		return tl.failure("release", strategy.ErrNotHeld, cause)
	}
	return nil
}

// Extend runs compare-and-PEXPIRE on every node and needs a quorum that
// held our token (the restart guard's excluded do not count).
func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	if err := ctx.Err(); err != nil {
		return engine.Acquired{}, fmt.Errorf("extend: %w", err)
	}
	start := time.Now()
	t.noteTTL(ttl)
	kv := append(t.extend.Args(3), heldKeys(h)[0], h.Value, ttl.Milliseconds())
	pexpire := func(ctx context.Context, l *link) answer {
		a := compareVote(t.evalArgs(ctx, l, t.extend, kv))
		if a.vote == voteYes && t.excluded(l.n) {
			a = answer{vote: voteExcluded, err: errRestarted}
		}
		return a
	}
	r := t.fanOut(ctx, t.nodes, pexpire, nil, nil)
	tl := newTally(len(t.nodes), t.cfg.Quorum)
	cause := r.collectInto(ctx, &tl, nil)
	validity := ttl - time.Since(start) - t.cfg.driftFor(ttl)
	if cause == nil && tl.won() && validity <= 0 {
		cause = errValidity
	}
	r.decide(cause != nil || !tl.won())
	if cause != nil || !tl.won() {
		if cause == nil {
			cause = r.settle(ctx, &tl, false)
		}
		return engine.Acquired{}, tl.failure("extend", strategy.ErrNotHeld, cause)
	}
	return engine.Acquired{Validity: validity}, nil
}

// releaseOn deletes the lock (keys) on l's node if it holds token;
// requeue (a waiter's ticket and member) puts the waiter back in line.
// When l is lost, or loses this reply, the release is owed. Errors are
// dropped: the lock expires at its TTL anyway.
func (t *technique) releaseOn(ctx context.Context, l *link, keys []any, token string, requeue ...any) {
	if !l.lost {
		kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
		if _, _ = t.evalArgs(ctx, l, t.release, append(kv, requeue...)); !l.lost {
			return
		}
	}
	t.owe(l.n, keys, token, requeue...)
}

// evalArgs runs s with kv (s.Args filled in, read-only) on l's node:
// EVALSHA, and EVAL on NOSCRIPT.
func (t *technique) evalArgs(ctx context.Context, l *link, s *redisconn.Script, kv []any) (any, error) {
	reply, err := t.exchange(ctx, l, "EVALSHA", kv)
	if redisconn.IsNoScript(err) {
		return t.exchange(ctx, l, "EVAL", append([]any{s.Source()}, kv[1:]...))
	}
	return reply, err
}

// compareVote reads a compare script's reply: 1 done, 0 not ours.
func compareVote(reply any, err error) answer {
	n, err := redis.Int(reply, err)
	switch {
	case err != nil:
		return answer{vote: voteFailed, err: err}
	case n == 0:
		return answer{vote: voteNo}
	}
	return answer{vote: voteYes}
}

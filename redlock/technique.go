package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// technique holds redlock's Redis commands and its per-node state. The
// engine calls it concurrently.
type technique struct {
	nodes         []*node
	s             settings
	acquireScript *redisconn.Script // acquire.lua: SET NX PX and INCR of the fencing counter
	raise         *redisconn.Script // raise.lua: the fencing write-back
	release       *redisconn.Script // release.lua: compare-and-delete, then the line's head is handed the lock or told
	abandon       *redisconn.Script // protocol's abandon.lua: a waiter leaves the line
	e             *engine.Locker    // the engine, which grants hands locks to (set once by New)
	grants        grants            // hand-offs by the nodes' releases to waiting Lock calls
	extend        *redisconn.Script
	clock         clock
	maxTTL        atomic.Int64      // the longest TTL asked for, in ns (restart guard)
	bg            tracker           // background node goroutines (Locker.Wait)
	late          lateRounds        // won acquire rounds still waiting for nodes
	releasing     releasing         // successful releases still waiting for nodes
	getname       redisconn.Command // the restart guard's CLIENT GETNAME, built once; read-only
	args          engine.LockerArgs // the Locker's TTL and name, boxed once
	closing       <-chan struct{}   // the engine's Closed: owed releases are paid at once
	left          leftWaiters       // Lock calls that gave up (Abandon): their undos requeue nothing

	// sharded: every node is a Redis Cluster, so the scripts publish on
	// shard channels (protocol.Sharded).
	sharded bool
}

// keysOf is the keys of the lock key, as the acquire and release scripts
// take them (protocol.Keys.All).
func keysOf(key string) []any { return protocol.KeysOf(key).All() }

// heldKeys is the keys of the lock h holds, boxed once at its acquire, or
// built anew for a lock that came without them (handed off or taken back).
func heldKeys(h engine.Held) []any {
	if len(h.Keys) == 4 {
		return h.Keys
	}
	return keysOf(h.Key)
}

// Acquire runs the acquire script (SET NX PX, and INCR of the key's
// fencing counter when it succeeds) on every node at once and decides as
// soon as a quorum said yes or can no longer say yes. On success the fence
// is settled (see fence), which takes a second round only when the
// yes-voters' counters disagree, and the validity is the TTL minus the time
// elapsed since the first round minus the drift allowance. On failure every
// node that may hold the lock is released, including nodes that answer
// after the decision; when the key is held by someone else the error is an
// *engine.BusyError giving the shortest remaining TTL the refusing nodes
// reported.
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	g, _, err := t.acquire(ctx, a, "")
	return g, err
}

// acquire is Acquire, with every node releasing the lock held with token
// prev first when prev is not empty (see HandOff). It also returns the round
// and its tally (a zero handing when no round was sent), whose answers tell
// where prev was released.
func (t *technique) acquire(ctx context.Context, a engine.Attempt, prev string) (engine.Acquired, handing, error) {
	if err := ctx.Err(); err != nil {
		return engine.Acquired{}, handing{}, fmt.Errorf("acquire: %w", err)
	}
	start := time.Now()
	ga := t.beginGrant(a, start)
	t.noteTTL(a.TTL)
	drift := t.s.driftFor(a.TTL)
	budget := a.TTL - drift // no validity left after this
	waits := "0"
	if a.Waits {
		waits = "1"
	}
	var prevLate *round // the round that took prev, if it still waits for nodes
	if prev != "" {
		prevLate = t.late.lookup(prev)
	}
	// The request, built once for every node (read-only from here on): a
	// lock to release first is the last, optional, argument.
	k := protocol.KeysOf(a.Key)
	kv := append(t.acquireScript.Args(11), k.Lock, k.Fence, k.Line, k.Seen,
		a.Token, t.args.TTL(a.TTL), a.Waiter, waits, a.Arrived.UnixMicro(), t.args.Locker(a.Locker))
	keys := kv[2:6:6] // boxed once, for the lease's Release and Extend
	if prev != "" {
		kv = append(kv, prev)
	}
	// A release of ours that succeeded may still be on its way to some
	// nodes: there, delete its lock first (see releasing).
	var pending *pendingRelease
	var kvPending []any
	if prev == "" {
		if pending = t.releasing.lookup(a.Key); pending != nil {
			// In kv's spare room: kv itself stays as it is.
			kvPending = append(kv, pending.token)
		}
	}
	set := func(ctx context.Context, l *link) (v answer) {
		n := l.n
		defer func() { t.answeredGrant(ga, n.index, v) }()
		if err := fault.At(ctx, n.acquirePoint); err != nil {
			return answer{vote: voteFailed, err: err} // nothing was sent
		}
		args := kv
		if pending != nil && pending.pending[n.index].Load() {
			args = kvPending
		}
		reply, err := t.evalArgs(ctx, l, t.acquireScript, args)
		v = t.acquireVote(n, reply, err)
		if v.prev == prevAbsent && prevLate != nil && prevLate.late.missed(n.index) {
			// prev's own SET reached this node after us (see lateRounds).
			t.releaseOn(ctx, l, keys, prev)
		}
		return v
	}
	undo := func(ctx context.Context, l *link) {
		if a.Waits {
			// A waiter's place in line, which its SET took it out of,
			// unless it gave up meanwhile.
			t.requeueOn(ctx, l, keys, a)
			return
		}
		t.releaseOn(ctx, l, keys, a.Token)
	}
	r := t.fanOut(ctx, t.nodes, set, undo)
	for _, n := range r.unsent {
		t.answeredGrant(ga, n.index, answer{})
	}
	tl := newTally(len(t.nodes), t.s.quorum)

	var giveUp <-chan time.Time
	if t.s.nodeTimeout >= budget {
		// Only when every node could still answer after the validity ran
		// out does the round need a clock of its own.
		timer := time.NewTimer(max(budget, 0))
		defer timer.Stop()
		giveUp = timer.C
	}
	cause := r.collectInto(ctx, &tl, giveUp)
	validity := a.TTL - time.Since(start) - drift
	if cause == nil && tl.won() && validity <= 0 {
		cause = errValidity
	}
	var fence uint64
	if cause == nil && tl.won() {
		fence, cause = t.fence(ctx, a, keys, &tl, validity)
		if errors.Is(cause, fault.ErrCrashed) {
			r.decide(false) // the client "died": Redis stays as it is
			return engine.Acquired{}, handing{r, tl}, cause
		}
		validity = a.TTL - time.Since(start) - drift
		if cause == nil && validity <= 0 {
			cause = errValidity
		}
	}
	if cause != nil || !tl.won() {
		// A caller whose context ended is not kept waiting for the releases.
		r.failAndUndo(&tl, cause == nil || errors.Is(cause, errValidity) || errors.Is(cause, errWriteBack))
		if cause == nil {
			cause = r.settle(ctx, &tl, false)
		}
		var refusal error = strategy.ErrNotAcquired
		if tl.busy > 0 {
			refusal = &engine.BusyError{Key: a.Key, Remaining: tl.busy, Listened: tl.heardEverywhere()}
		}
		return engine.Acquired{}, handing{r, tl}, tl.failure("acquire", refusal, cause)
	}
	if a.Waits {
		r.refused = t.leaveOn(a) // the refusals queued us
	}
	t.late.track(a.Key, a.Token, r, len(t.nodes))
	r.decide(false)
	return engine.Acquired{Fence: fence, Validity: validity, Keys: keys}, handing{r, tl}, nil
}

// Release runs the compare-and-delete script on every node. It returns nil
// as soon as a quorum deleted the lock, and ErrNotHeld as soon as so many
// nodes said "not ours" that the lock cannot have been held by a quorum;
// the other nodes are still released in the background. Otherwise, once
// every node answered, it returns nil when the lock is released all the
// same: at least one node deleted it and too few nodes may still hold our
// token to form a quorum (some failed, the rest said "not ours"). Else it
// returns the nodes' failures. Once the lease is spent (nil or
// ErrNotHeld), every node that may still hold the lock because its
// release was skipped or lost its reply is owed the release (owe); a
// failure leaves the lease to be released again by the caller instead.
func (t *technique) Release(ctx context.Context, h engine.Held) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if h.Keys == nil {
		// A lock handed off by the nodes' releases (grants), or taken back.
		t.settleDelivered(h.Value)
	}
	late := t.late.lookup(h.Value)
	kv := append(append(t.release.Args(5), heldKeys(h)...), h.Value)
	pending := newPendingRelease(h.Key, h.Value, len(t.nodes))
	del := func(ctx context.Context, l *link) answer {
		n := l.n
		defer pending.answered(n.index)
		if err := fault.At(ctx, n.releasePoint); err != nil {
			return answer{vote: voteFailed, err: err} // nothing was sent
		}
		// The script publishes the release notice in the same step.
		a := compareVote(t.evalArgs(ctx, l, t.release, kv))
		if a.vote == voteNo && late != nil && late.late.missed(n.index) {
			// Our acquire's SET reached this node after this release:
			// delete it again.
			a = compareVote(t.evalArgs(ctx, l, t.release, kv))
		}
		return a
	}
	r := t.fanOutThen(ctx, t.nodes, del, nil, pending)
	defer func() { t.releaseDone(r, err == nil || errors.Is(err, strategy.ErrNotHeld)) }()
	tl, cause := t.collect(ctx, r, nil)
	if cause == nil && tl.won() && tl.pending() > 0 {
		// The lease is spent: an acquire of ours may delete its lock on
		// the nodes that have not answered yet.
		t.releasing.track(pending)
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

// Extend runs the compare-and-PEXPIRE script on every node and needs a
// quorum of nodes that still held our token, within the new validity.
// Nodes excluded by the restart guard do not count.
func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	if err := ctx.Err(); err != nil {
		return engine.Acquired{}, fmt.Errorf("extend: %w", err)
	}
	start := time.Now()
	t.noteTTL(ttl)
	ms := ttl.Milliseconds()
	key := heldKeys(h)[0] // the lock, boxed at acquire
	kv := append(t.extend.Args(3), key, h.Value, ms)
	pexpire := func(ctx context.Context, l *link) answer {
		a := compareVote(t.evalArgs(ctx, l, t.extend, kv))
		if a.vote == voteYes && t.s.guard && l.n.excluded(t.clock.now()) {
			a = answer{vote: voteExcluded, err: errRestarted}
		}
		return a
	}
	r := t.fanOut(ctx, t.nodes, pexpire, nil)
	tl, cause := t.collect(ctx, r, nil)
	validity := ttl - time.Since(start) - t.s.driftFor(ttl)
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

// releaseOn deletes the lock on l's node if it still holds token, over l
// when it is not lost; keys are the lock's (keysOf). When l is lost, or
// the connection fails under the release, the release is owed to the
// node instead (owe), and sent as soon as its breaker lets a call
// through. It takes back a failed attempt: requeue, when given (the
// waiter's ticket and line member), puts the waiter back in the node's
// line, which the attempt's SET took it out of; then the head of the
// line, whose turn it may now be, is told. Errors are dropped: it runs in
// the background, and the lock expires at its TTL anyway.
func (t *technique) releaseOn(ctx context.Context, l *link, keys []any, token string, requeue ...any) {
	if !l.lost {
		kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
		kv = append(kv, requeue...)
		if _, _ = t.evalArgs(ctx, l, t.release, kv); !l.lost {
			return
		}
	}
	t.owe(l.n, keys, token, requeue...)
}

// evalScript runs script s with keys and args (EVALSHA, see evalArgs).
func (t *technique) evalScript(ctx context.Context, l *link, s *redisconn.Script, keys []any, args ...any) (any, error) {
	kv := append(append(s.Args(len(keys)+len(args)), keys...), args...)
	return t.evalArgs(ctx, l, s, kv)
}

// evalArgs runs script s on l's node with EVALSHA through exchange, and
// once more with EVAL, through exchange too, when the node does not have
// it cached (NOSCRIPT). kv is the whole argument list, built once per
// round with s.Args (s's hash, the number of keys, the keys and the
// arguments), that every node of the round sends: nothing may change it
// afterwards.
func (t *technique) evalArgs(ctx context.Context, l *link, s *redisconn.Script, kv []any) (any, error) {
	reply, err := t.exchange(ctx, l, "EVALSHA", kv...)
	if e, ok := err.(redis.Error); ok && strings.HasPrefix(string(e), "NOSCRIPT ") {
		// EVAL loads the script as it runs it.
		return t.exchange(ctx, l, "EVAL", append([]any{s.Source()}, kv[1:]...)...)
	}
	return reply, err
}

// compareVote turns a compare script's reply (1 done, 0 not ours) into a
// vote.
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

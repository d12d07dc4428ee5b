package redlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

//go:embed acquire.lua
var acquireSource string // its reply: readAcquire

// acquireVote reads acquire.lua's reply as a vote, with the restart guard.
func (t *technique) acquireVote(n *node, reply any, err error) answer {
	if err != nil {
		// The SET may have run, unless it was never sent.
		return answer{vote: voteFailed, err: err, mayHold: !errors.Is(err, redisconn.ErrNotSent)}
	}
	v, ok := readAcquire(reply)
	switch {
	case !ok || v.status < 0 || v.status > 2:
		return answer{vote: voteFailed, err: fmt.Errorf("acquire script replied %v", reply), mayHold: true}
	case v.status != 1:
		var remaining time.Duration
		if v.n >= 0 { // -1: the holder's key has no expiry
			remaining = time.Duration(max(v.n, 1)) * time.Millisecond
		}
		if v.status == 2 && (remaining == 0 || remaining > t.cfg.NodeTimeout) {
			// A token of this Lock call not taken over (this attempt's
			// own left by its undo, a later attempt's, a hand-off's): it is
			// released within about NodeTimeout.
			remaining = t.cfg.NodeTimeout
		}
		queued := v.status == 0 && v.fenceSeen != noRefusal
		return answer{vote: voteNo, remaining: remaining, prev: prevOf(v.released), listened: v.status == 0 && v.listened == 1, queued: queued, fenceSeen: v.fenceSeen}
	case t.excluded(n):
		return answer{vote: voteExcluded, err: errRestarted, mayHold: true, prev: prevOf(v.released)}
	}
	return answer{vote: voteYes, mayHold: true, counter: v.n, prev: prevOf(v.released)}
}

// prevOf reads the acquire script's "released" flag.
func prevOf(released int64) prevState {
	if released == 1 {
		return prevDeleted
	}
	return prevAbsent
}

// acquireReply is acquire.lua's reply: status 1 taken (n: the counter), 0
// refused, 2 refused by a token of this Lock call (n: the holder's PTTL,
// -1 without expiry); released, listened: 1 or 0; fenceSeen: the counter
// a refusal that queued the waiter saw, else noRefusal.
type acquireReply struct{ status, n, released, listened, fenceSeen int64 }

// readAcquire decodes acquire.lua's reply (a bare counter, or an array of
// 3 to 5); it reports false for any other shape.
func readAcquire(reply any) (acquireReply, bool) {
	out := acquireReply{fenceSeen: noRefusal}
	if f, ok := reply.(int64); ok {
		out.status, out.n = 1, f
		return out, true
	}
	v, ok := reply.([]any)
	if !ok || len(v) < 3 || len(v) > 5 {
		return out, false
	}
	fields := [...]*int64{&out.status, &out.n, &out.released, &out.listened, &out.fenceSeen}
	for i, x := range v {
		if *fields[i], ok = x.(int64); !ok {
			return out, false
		}
	}
	return out, true
}

// Acquire runs acquire.lua on every node and decides once a quorum said
// yes or no longer can; then it settles the fence and validity, or
// releases every node that may hold the lock (a held key: *engine.BusyError).
func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	g, _, _, err := t.acquire(ctx, a, "")
	return g, err
}

// acquire is Acquire, every node first releasing the lock of token prev
// when prev is not empty (HandOff). It also returns the round (nil when
// none was sent) and its tally.
func (t *technique) acquire(ctx context.Context, a engine.Attempt, prev string) (engine.Acquired, *round, tally, error) {
	if err := ctx.Err(); err != nil {
		return engine.Acquired{}, nil, tally{}, fmt.Errorf("acquire: %w", err)
	}
	start := time.Now()
	ga := t.beginGrant(a, start)
	t.noteTTL(a.TTL)
	drift := t.cfg.driftFor(a.TTL)
	r, keys := t.sendAcquire(ctx, a, prev, ga)
	tl := newTally(len(t.nodes), t.cfg.Quorum)
	giveUp, stop := t.validityTimer(a.TTL - drift)
	defer stop()
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
			return engine.Acquired{}, r, tl, cause
		}
		if validity = a.TTL - time.Since(start) - drift; cause == nil && validity <= 0 {
			cause = errValidity
		}
	}
	if cause != nil || !tl.won() {
		// A caller whose context ended does not wait for the releases.
		r.failAndUndo(&tl, cause == nil || errors.Is(cause, errValidity) || errors.Is(cause, errWriteBack))
		if cause == nil {
			cause = r.settle(ctx, &tl, false)
		}
		var refusal error = strategy.ErrNotAcquired
		if tl.busy > 0 {
			refusal = &engine.BusyError{Key: a.Key, Remaining: tl.busy, Listened: tl.heardEverywhere()}
		}
		return engine.Acquired{}, r, tl, tl.failure("acquire", refusal, cause)
	}
	if a.Waits {
		r.refused = t.leaveOp(a.Key, a.Waiter, lineMember(a)) // the refusals queued us
	}
	r.late.watch(a.Key, len(t.nodes))
	t.late.Track(a.Token, r)
	r.decide(false)
	return engine.Acquired{Fence: fence, Validity: validity, Keys: keys}, r, tl, nil
}

// sendAcquire sends a's request to every node, releasing prev first (see
// acquire), and returns the round and the lock's keys.
func (t *technique) sendAcquire(ctx context.Context, a engine.Attempt, prev string, ga grantAttempt) (*round, []any) {
	waits := "0"
	if a.Waits {
		waits = "1"
	}
	var prevLate *round // the round that took prev, if it still waits for nodes
	if prev != "" {
		prevLate = t.late.Lookup(prev)
	}
	// Read-only once built; the optional last argument is a lock to release first.
	k := protocol.KeysOf(a.Key)
	kv := append(t.acquireScript.Args(11), k.Lock, k.Fence, k.Line, k.Seen,
		a.Token, t.args.TTL(a.TTL), a.Waiter, waits, a.Arrived.UnixMicro(), t.args.Locker(a.Locker))
	keys := kv[2:6:6] // for the lease's Release and Extend
	var pending *pendingRelease
	var kvPending []any
	if prev != "" {
		kv = append(kv, prev)
	} else if pending = t.releasing.Lookup(a.Key); pending != nil {
		// Where our release is still on its way, delete its lock first.
		kvPending = append(kv, pending.token)
	}
	set := func(ctx context.Context, l *link) (v answer) {
		n := l.n
		defer func() { t.answeredGrant(ga, n.index, v) }()
		if err := fault.At(ctx, n.acquirePoint); err != nil {
			return answer{vote: voteFailed, err: err} // nothing was sent
		}
		args := kv
		if pending != nil && !pending.answered[n.index].Load() {
			args = kvPending
		}
		reply, err := t.evalArgs(ctx, l, t.acquireScript, args)
		v = t.acquireVote(n, reply, err)
		if v.prev == prevAbsent && prevLate != nil && prevLate.late.mark(n.index, nodeMissed) {
			t.releaseOn(ctx, l, keys, prev) // prev's own SET came after us
		}
		if a.Waits && (v.queued || v.vote == voteFailed && v.mayHold) && t.left.Has(a.Waiter) {
			// It gave up meanwhile; this may have queued it after its leave.
			t.leaveOp(a.Key, a.Waiter, lineMember(a))(ctx, l)
		}
		return v
	}
	undo := func(ctx context.Context, l *link) answer {
		if a.Waits {
			t.requeueOn(ctx, l, keys, a) // back in the line its SET took it out of
		} else {
			t.releaseOn(ctx, l, keys, a.Token)
		}
		return answer{}
	}
	r := t.fanOut(ctx, t.nodes, set, undo, nil)
	for _, n := range r.unsent {
		t.answeredGrant(ga, n.index, answer{})
	}
	return r, keys
}

// validityTimer returns a channel that fires once budget ran out (nil
// when no node can answer that late), and its stop.
func (t *technique) validityTimer(budget time.Duration) (<-chan time.Time, func() bool) {
	if t.cfg.NodeTimeout < budget {
		return nil, func() bool { return false }
	}
	timer := time.NewTimer(max(budget, 0))
	return timer.C, timer.Stop
}

//go:embed raise.lua
var raiseSource string // its reply: compareVote

// FenceKey is the key of the fencing counter every node keeps for rkey,
// as lua_release names it; it expires protocol.FenceRetention after the
// TTL of the last lock it fenced.
func FenceKey(rkey string) string { return protocol.KeysOf(rkey).Fence }

// pointBeforeWriteBack is the fault point before the write-back.
const pointBeforeWriteBack = "redlock/acquire:before-write-back"

var (
	errWriteBack = errors.New("the fencing write-back did not reach a quorum")
	errNotOurs   = errors.New("the lock is no longer ours on this node") // a write-back's refusal
)

// fence settles the token of a won round (tl): F, the largest counter of
// its yes-voters. When fewer than a quorum returned F, raise.lua raises
// the others while our lock holds there, leaving a quorum at F or above,
// or it returns an error wrapping errWriteBack and the failures, ctx.Err()
// or errValidity once budget ran out.
func (t *technique) fence(ctx context.Context, a engine.Attempt, keys []any, tl *tally, budget time.Duration) (uint64, error) {
	f := tl.top
	var behind []*node
	atF := 0
	for i, c := range tl.counters {
		if c == f {
			atF++
		} else if c > 0 { // 0: not a yes-voter
			behind = append(behind, t.nodes[i])
		}
	}
	if atF >= t.cfg.Quorum {
		return uint64(f), nil
	}
	if err := fault.At(ctx, pointBeforeWriteBack); err != nil {
		return 0, err
	}
	giveUp, stop := t.validityTimer(budget)
	defer stop()
	kv := append(append(t.raise.Args(5), keys[:2]...), a.Token, strconv.FormatInt(f, 10), t.args.TTL(a.TTL))
	raise := func(ctx context.Context, l *link) answer {
		v := compareVote(t.evalArgs(ctx, l, t.raise, kv))
		if v.vote == voteNo {
			v = answer{vote: voteFailed, err: errNotOurs}
		}
		return v
	}
	// Nothing to undo: a failed acquire releases every node afterwards.
	r := t.fanOut(ctx, behind, raise, nil, nil)
	defer r.decide(false)
	wb := newTally(len(behind), t.cfg.Quorum-atF)
	if err := r.collectInto(ctx, &wb, giveUp); err != nil {
		return 0, err
	}
	if !wb.won() {
		return 0, fmt.Errorf("%d of %d nodes raised their counter to %d, %d needed: %w",
			wb.yes, len(behind), f, wb.quorum, lockerr.Joined(append([]error{errWriteBack}, wb.errs...)))
	}
	return uint64(f), nil
}

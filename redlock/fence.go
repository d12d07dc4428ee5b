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
)

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

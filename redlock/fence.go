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
	"github.com/lockzoo/lockzoo/internal/protocol"
)

var (
	//go:embed acquire.lua
	acquireSource string
	//go:embed raise.lua
	raiseSource string
)

// FenceKey is the Redis key of the fencing counter kept on every node for
// the lock key rkey (protocol.KeysOf, as lua_release names it). It expires
// protocol.FenceRetention after the TTL of the last lock it fenced.
func FenceKey(rkey string) string { return protocol.KeysOf(rkey).Fence }

// pointBeforeWriteBack is reached when an acquire won its quorum but the
// yes-voters' counters disagree, before the write-back round (see
// writeBack). Tests gate it to change a node in between.
const pointBeforeWriteBack = "redlock/acquire:before-write-back"

// fenceOf returns the fencing token of a won acquire round, F: the largest
// counter its yes-voters returned. It also returns how many yes-voters
// returned exactly F, and the indexes of those that returned less.
func (t *tally) fenceOf() (f int64, atF int, behind []int) {
	for _, c := range t.counters {
		f = max(f, c)
	}
	for i, c := range t.counters {
		switch {
		case c == 0: // not a yes-voter
		case c == f:
			atF++
		default:
			behind = append(behind, i)
		}
	}
	return f, atF, behind
}

// errWriteBack is the cause of an acquire whose fencing write-back did not
// reach a quorum.
var errWriteBack = errors.New("the fencing write-back did not reach a quorum")

// errNotOurs is a write-back refused because the lock on the node is no
// longer ours (it expired, or was deleted by hand).
var errNotOurs = errors.New("the lock is no longer ours on this node")

// writeBack is the second round of an acquire whose yes-voters returned
// different counters: on the yes-voters whose counter is below f (behind,
// by node index) it runs the raise script on keys (the acquire's: the lock
// and its counter first), which sets the counter to
// max(counter, f) while the lock still holds the token. It needs need of
// them to succeed, so that with the atF nodes already at f a quorum holds a
// counter of at least f. It returns nil once they did, else an error
// wrapping errWriteBack and the nodes' failures, or ctx.Err(), or
// errValidity when giveUp fires first (a nil giveUp never does).
//
// The round's goroutines end on their own within NodeTimeout (see fanOut);
// nothing is undone here: a failed acquire releases every node afterwards.
func (t *technique) writeBack(ctx context.Context, keys []any, token string, ttl time.Duration, f int64, behind []int, need int, giveUp <-chan time.Time) error {
	nodes := make([]*node, len(behind))
	for i, idx := range behind {
		nodes[i] = t.nodes[idx]
	}
	kv := append(append(t.raise.Args(5), keys[:2]...), token, strconv.FormatInt(f, 10), t.args.TTL(ttl))
	raise := func(ctx context.Context, l *link) answer {
		a := compareVote(t.evalArgs(ctx, l, t.raise, kv))
		if a.vote == voteNo {
			a = answer{vote: voteFailed, err: errNotOurs}
		}
		return a
	}
	r := t.fanOut(ctx, nodes, raise, nil)
	defer r.decide(false) // nobody waits for it: there is no undo
	done, failed := 0, 0
	var errs []error
	for done < need {
		if len(nodes)-failed < need {
			errs = append([]error{errWriteBack}, errs...)
			return fmt.Errorf("%d of %d nodes raised their counter to %d, %d needed: %w", done, len(nodes), f, need, joined(errs))
		}
		select {
		case a := <-r.answers:
			if a.vote == voteYes {
				done++
			} else {
				failed++
				errs = append(errs, fmt.Errorf("node %d: %w", a.node, a.err))
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-giveUp:
			return errValidity
		}
	}
	return nil
}

// fence settles the fencing token of a won acquire round (tl): when at
// least a quorum of yes-voters returned the largest counter F, F is the
// token at no extra cost; otherwise the write-back round raises the
// counters of the yes-voters below F (writeBack), on keys (the acquire's).
// budget is the time left
// before the lock's validity runs out, counted from now.
func (t *technique) fence(ctx context.Context, a engine.Attempt, keys []any, tl *tally, budget time.Duration) (uint64, error) {
	f, atF, behind := tl.fenceOf()
	if atF >= t.s.quorum {
		return uint64(f), nil
	}
	if err := fault.At(ctx, pointBeforeWriteBack); err != nil {
		return 0, err
	}
	var giveUp <-chan time.Time
	if t.s.nodeTimeout >= budget {
		timer := time.NewTimer(max(budget, 0))
		defer timer.Stop()
		giveUp = timer.C
	}
	if err := t.writeBack(ctx, keys, a.Token, a.TTL, f, behind, t.s.quorum-atF, giveUp); err != nil {
		return 0, err
	}
	return uint64(f), nil
}

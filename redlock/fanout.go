package redlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// nodeOp runs one request on one node over l, bounded by ctx; an undo
// after the round's decision is one too, its answer dropped.
type nodeOp func(ctx context.Context, l *link) answer

// round is one request sent to every node in parallel, a goroutine per
// node. The caller reads answers until it can decide, then publishes the
// decision; a late node's goroutine undoes its call if the round failed.
type round struct {
	answers   chan answer   // buffered for every node
	decided   chan struct{} // closed once failed is set
	failed    bool
	ready     chan struct{} // wakes collectInto once wakeAt answers came (fewer cannot decide)
	count     atomic.Int32
	wakeAt    int32
	awaited   []bool // the nodes whose undo failAndUndo waits for (undone)
	undone    sync.WaitGroup
	refused   nodeOp          // set before a won decision: runs where the answer may have queued the waiter
	late      lateState       // the round's part in technique.late
	ctx       context.Context // bounds each request by NodeTimeout; the last one cancels it
	cancel    context.CancelFunc
	running   atomic.Int32
	releasing *pendingRelease // for a release round
	ended     chan struct{}   // for a release round: closed by releaseDone
	spent     bool
	unsent    []*node // nodes sent nothing: skipped, or ctx had ended
	unsentBuf [8]*node
}

// fanOut starts op on each of nodes and returns the round; the caller must
// call decide once. A caller whose ctx ended sends nothing. Each request
// and undo is bounded by NodeTimeout and runs under ctx's values but not
// its cancellation: a caller giving up cannot abort a request that may
// have taken the lock (Locker.Wait waits for them). p is a release's
// round (see releasing), else nil.
func (t *technique) fanOut(ctx context.Context, nodes []*node, op nodeOp, undo nodeOp, p *pendingRelease) *round {
	base := ctx
	if _, bounded := ctx.Deadline(); bounded || ctx.Done() != nil {
		base = context.WithoutCancel(ctx)
	}
	r := &round{answers: make(chan answer, len(nodes)), decided: make(chan struct{}), releasing: p, ready: make(chan struct{}, 1)}
	r.wakeAt = int32(max(1, min(t.cfg.Quorum, len(nodes)-t.cfg.Quorum+1)))
	if p != nil {
		r.ended = make(chan struct{})
	}
	r.ctx, r.cancel = context.WithTimeout(base, t.cfg.NodeTimeout)
	type admitted struct {
		n     *node
		probe bool
	}
	var buf [8]admitted // no allocation up to 8 nodes
	calls := buf[:0]
	r.unsent = r.unsentBuf[:0]
	dead := ctx.Err()
	for _, n := range nodes {
		if dead != nil {
			r.unsent = append(r.unsent, n)
			r.put(answer{node: n.index, vote: voteFailed, err: dead})
		} else if ok, probe := n.br.Admit(); ok {
			calls = append(calls, admitted{n, probe})
		} else {
			r.unsent = append(r.unsent, n)
			r.put(answer{node: n.index, vote: voteFailed, err: n.br.Skipped()})
		}
	}
	r.running.Store(int32(len(calls)))
	if len(calls) == 0 {
		r.cancel()
		if p != nil {
			t.releasing.Finish(p)
		}
	}
	t.bg.Add(len(calls))
	for _, c := range calls {
		go t.runNode(base, r, c.n, c.probe, op, undo)
	}
	return r
}

// releaseDone publishes that r's Release returned, and whether the lease
// is spent: then skipped nodes, and those whose reply was lost, are owed
// the release.
func (t *technique) releaseDone(r *round, spent bool) {
	r.spent = spent
	close(r.ended)
	if spent {
		for _, n := range r.unsent { // skipped: a ctx that ended fails the release
			t.owe(n, keysOf(r.releasing.key), r.releasing.token)
		}
	}
}

func (r *round) put(a answer) {
	r.answers <- a
	if r.count.Add(1) >= r.wakeAt {
		select {
		case r.ready <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// decide publishes the decision to the round's goroutines; call it once.
func (r *round) decide(failed bool) {
	r.failed = failed
	close(r.decided)
}

// failAndUndo publishes a failed decision and, with wait, waits until the
// nodes that granted the lock (tl.granted) released it, so that a retry
// does not run into this attempt's leftovers.
func (r *round) failAndUndo(tl *tally, wait bool) {
	if !wait {
		r.decide(true)
		return
	}
	r.awaited = slices.Clone(tl.granted) // settle may mark more later
	for _, g := range r.awaited {
		if g {
			r.undone.Add(1)
		}
	}
	r.decide(true)
	r.undone.Wait()
}

// collectInto reads answers into tl until a quorum said yes or can no
// longer say yes; it returns ctx.Err() when ctx ends first, errValidity
// when giveUp fires (a nil giveUp never does).
func (r *round) collectInto(ctx context.Context, tl *tally, giveUp <-chan time.Time) error {
	for !tl.won() && !tl.lost() {
		select {
		case a := <-r.answers:
			tl.add(a)
			continue // the next one may be there already
		default:
		}
		select {
		case <-r.ready:
		case <-ctx.Done():
			return ctx.Err()
		case <-giveUp:
			return errValidity
		}
	}
	return nil
}

// settle reads more answers of a lost round until they tell whether
// refusals alone ruled the quorum out (which picks the error); with all,
// until every node answered unless refusals decide first. It returns
// ctx.Err() when ctx ends.
func (r *round) settle(ctx context.Context, tl *tally, all bool) error {
	for !tl.refusedByQuorum() && tl.pending() > 0 && (all || tl.refused+tl.pending() > tl.n-tl.quorum) {
		select {
		case a := <-r.answers:
			tl.add(a)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// runNode is the goroutine of one node in one round.
func (t *technique) runNode(base context.Context, r *round, n *node, probe bool, op nodeOp, undo nodeOp) {
	defer t.bg.Done()
	l, a := t.call(r.ctx, n, probe, op)
	if r.running.Add(-1) == 0 {
		r.cancel()
		t.late.Finish(r)
		if r.releasing != nil {
			t.releasing.Finish(r.releasing)
		}
	}
	r.put(a)
	if r.releasing != nil && l.lost {
		// The lost release may have left the lock here: owed once spent.
		if <-r.ended; r.spent {
			t.owe(n, keysOf(r.releasing.key), r.releasing.token)
		}
	}
	if undo == nil {
		return
	}
	<-r.decided
	var after nodeOp
	switch {
	case r.failed && a.mayHold:
		after = undo
	case !r.failed && r.refused != nil && (a.vote == voteNo && !l.lost || a.vote == voteFailed && a.mayHold):
		after = r.refused // the request may have queued the waiter here
	case !r.failed && a.vote == voteYes && r.late.mark(n.index, nodeYes):
		// The lease's release came here before our SET: delete it now.
		after = func(ctx context.Context, l *link) answer {
			t.releaseOn(ctx, l, keysOf(r.late.key), r.late.Name())
			return answer{}
		}
	}
	if after != nil {
		uctx, ucancel := context.WithTimeout(base, t.cfg.NodeTimeout)
		_ = guarded(func() { _ = after(uctx, l) }) // best effort: the TTL ends it anyway
		ucancel()
	}
	if r.awaited != nil && r.awaited[n.index] {
		r.undone.Done()
	}
}

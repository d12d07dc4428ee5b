package redlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// nodeOp runs one request on one node over l, bounded by ctx, and returns
// the node's answer (node index filled in by the caller).
type nodeOp func(ctx context.Context, l *link) answer

// undoOp takes back what a node may hold after an acquire that failed,
// over the link the request went over (lost when the request got no
// reply).
type undoOp func(ctx context.Context, l *link)

// round is one request sent to every node in parallel. Each node has its
// own goroutine; the caller reads answers until it can decide, then
// publishes the decision by closing decided. Goroutines whose node answers
// after the decision still finish their call, and undo it if the round
// failed.
type round struct {
	answers chan answer   // buffered for every node: senders never block (put)
	decided chan struct{} // closed by the caller once failed is set
	failed  bool          // the decision; read only after decided is closed

	// ready wakes collectInto (buffered for one signal, never blocking a
	// sender): put signals it for each answer from the wakeAt-th on,
	// since fewer answers cannot decide a round over every node, so that
	// the caller wakes once for a healthy quorum, not once per answer.
	ready  chan struct{}
	count  atomic.Int32
	wakeAt int32

	// awaited marks, by node index, the undos the caller waits for (set
	// before decided is closed, nil when it waits for none); each of those
	// calls undone.Done.
	awaited []bool
	undone  sync.WaitGroup

	// refused, when set before a successful decision, runs on every node
	// that refused the request, or whose answer was lost after the
	// request may have run (it may have queued the waiter), over the same
	// link after its answer (so after the request on that node), once the
	// decision is published; only for rounds with an undo.
	refused undoOp

	// late is the round's part in technique.late (won acquire rounds).
	late lateState

	// ctx bounds every node's request by Config.NodeTimeout; the last
	// goroutine to finish its request cancels it, and then, for a release
	// round, stops tracking its pending release (see fanOutThen).
	ctx       context.Context
	cancel    context.CancelFunc
	running   atomic.Int32
	releasing *pendingRelease

	// For a release round (releasing set): skipped is the nodes the
	// breaker skipped (set before any goroutine starts), and ended is
	// closed once the round's Release returned, spent set before: whether
	// the lease is spent, so that the nodes that may still hold the lock
	// are owed its release (see releaseDone).
	skipped []*node
	ended   chan struct{}
	spent   bool

	// unsent is the nodes the round sent nothing to (the breaker skipped
	// them, or the caller's context had ended), set before fanOut returns;
	// in unsentBuf up to 8 nodes, which saves an allocation.
	unsent    []*node
	unsentBuf [8]*node
}

// fanOut starts op on each of nodes (t.nodes, or a subset) and returns the
// round whose answers the caller collects. It must then call decide exactly
// once. When ctx has already ended it starts nothing: every node answers
// at once with ctx's error, and no connection is taken.
//
// Every goroutine it starts ends on its own: the request is bounded by
// Config.NodeTimeout, and when undo is given the goroutine waits for the
// decision (which decide always publishes) and then makes at most one more
// call, bounded by NodeTimeout too. The calls run under ctx's values but not
// its cancellation: a caller that gives up must not abort a request that
// may already have taken the lock on a node, or the undo would be lost.
// Locker.Wait waits for these goroutines.
func (t *technique) fanOut(ctx context.Context, nodes []*node, op nodeOp, undo undoOp) *round {
	return t.fanOutThen(ctx, nodes, op, undo, nil)
}

// fanOutThen is fanOut for a release round: once every request it sent
// has been answered (at once when it sends none), it stops tracking p,
// when p is not nil (releasing.finish).
func (t *technique) fanOutThen(ctx context.Context, nodes []*node, op nodeOp, undo undoOp, p *pendingRelease) *round {
	base := ctx
	if _, bounded := ctx.Deadline(); bounded || ctx.Done() != nil {
		base = context.WithoutCancel(ctx) // ctx's values, not its end
	}
	r := &round{answers: make(chan answer, len(nodes)), decided: make(chan struct{}), releasing: p, ready: make(chan struct{}, 1)}
	r.wakeAt = int32(max(1, min(t.s.quorum, len(nodes)-t.s.quorum+1)))
	if p != nil {
		r.ended = make(chan struct{})
	}
	r.ctx, r.cancel = context.WithTimeout(base, t.s.nodeTimeout)
	type admitted struct {
		n     *node
		probe bool
	}
	var buf [8]admitted // no allocation up to 8 nodes
	calls := buf[:0]
	r.unsent = r.unsentBuf[:0]
	dead := ctx.Err() // a caller whose context ended sends nothing
	for _, n := range nodes {
		if dead != nil {
			r.unsent = append(r.unsent, n)
			r.put(answer{node: n.index, vote: voteFailed, err: dead})
		} else if ok, probe := n.br.admit(); ok {
			calls = append(calls, admitted{n, probe})
		} else {
			// A failing node with a probe in flight: answer for it at once.
			r.unsent = append(r.unsent, n)
			r.put(answer{node: n.index, vote: voteFailed, err: n.br.skipped()})
			if p != nil {
				r.skipped = append(r.skipped, n)
			}
		}
	}
	r.running.Store(int32(len(calls)))
	if len(calls) == 0 {
		r.cancel()
		if p != nil {
			t.releasing.finish(p)
		}
	}
	t.bg.add(len(calls))
	for _, c := range calls {
		go t.runNode(base, r, c.n, c.probe, op, undo)
	}
	return r
}

// releaseDone publishes that the Release of the release round r returned,
// whether its lease is spent, to r's goroutines; when it is, every node
// the breaker skipped is owed the release, as is every node whose
// release loses its reply (see runNode).
func (t *technique) releaseDone(r *round, spent bool) {
	r.spent = spent
	close(r.ended)
	if spent {
		for _, n := range r.skipped {
			t.owe(n, keysOf(r.releasing.key), r.releasing.token)
		}
	}
}

// put hands a node's answer to the caller, and wakes collectInto once
// enough answers came to decide.
func (r *round) put(a answer) {
	r.answers <- a
	if r.count.Add(1) >= r.wakeAt {
		select {
		case r.ready <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// decide publishes the decision to the round's goroutines.
func (r *round) decide(failed bool) {
	r.failed = failed
	close(r.decided)
}

// failAndUndo publishes a failed decision and, when wait is set, waits
// until the nodes that granted the lock before it (tl.granted) have
// released it; later answers are released in the background. Waiting keeps
// a retry that follows at once from running into this attempt's own
// leftovers, which would make it fail again. Each release is bounded by
// NodeTimeout.
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

// collect reads answers until a quorum said yes, a quorum can no longer say
// yes, ctx ends or giveUp fires (a nil giveUp never does). The error is
// ctx.Err() or errValidity in the last two cases.
func (t *technique) collect(ctx context.Context, r *round, giveUp <-chan time.Time) (tally, error) {
	tl := newTally(len(t.nodes), t.s.quorum)
	err := r.collectInto(ctx, &tl, giveUp)
	return tl, err
}

// collectInto is collect adding to tl.
func (r *round) collectInto(ctx context.Context, tl *tally, giveUp <-chan time.Time) error {
	for !tl.won() && !tl.lost() {
		select {
		case a := <-r.answers:
			tl.add(a)
			continue // the next one may be there already
		default:
		}
		select {
		case <-r.ready: // answers came: read them above
		case <-ctx.Done():
			return ctx.Err()
		case <-giveUp:
			return errValidity
		}
	}
	return nil
}

// settle reads more answers of a lost round until they tell whether
// refusals alone ruled the quorum out (see tally.refusedByQuorum), which
// decides the error a caller gets: "held by someone else" or "nodes
// failed"; with all, it reads until every node answered unless refusals
// rule the quorum out first. It returns early, with ctx.Err(), only when
// ctx ends. The wait is short: the round's decision is already published,
// and every node answers within NodeTimeout.
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
func (t *technique) runNode(base context.Context, r *round, n *node, probe bool, op nodeOp, undo undoOp) {
	defer t.bg.done()
	l, a := t.call(r.ctx, n, probe, op)
	if r.running.Add(-1) == 0 {
		r.cancel()
		t.late.finish(r)
		if r.releasing != nil {
			t.releasing.finish(r.releasing)
		}
	}
	r.put(a)
	if r.releasing != nil && l.lost {
		// A release that lost its reply may have left the lock on this
		// node, where it would stay until its TTL: once the lease is
		// spent, it is owed.
		if <-r.ended; r.spent {
			t.owe(n, keysOf(r.releasing.key), r.releasing.token)
		}
	}
	if undo != nil {
		<-r.decided
		var after undoOp // one more call on this node, once decided
		switch {
		case r.failed && a.mayHold:
			after = undo
		case !r.failed && r.refused != nil && (a.vote == voteNo && !l.lost || a.vote == voteFailed && a.mayHold):
			// A refusal queued the waiter here, and so may a request
			// whose answer was lost after it ran.
			after = r.refused
		case !r.failed && a.vote == voteYes && r.late.yes(n.index):
			// A release of the lease found nothing to delete here: it came
			// before our SET, which would be left behind. Delete it now.
			after = func(ctx context.Context, l *link) {
				t.releaseOn(ctx, l, keysOf(r.late.key), r.late.token)
			}
		}
		if after != nil {
			uctx, ucancel := context.WithTimeout(base, t.s.nodeTimeout)
			// A panic here (the user's pool or connection) is dropped: the
			// undo is best effort, the lock expires at its TTL anyway.
			_ = guarded(func() { after(uctx, l) })
			ucancel()
		}
		if r.awaited != nil && r.awaited[n.index] {
			r.undone.Done()
		}
	}
}

// tracker counts background goroutines so that Locker.Wait can wait for
// them. Its zero value is ready to use.
type tracker struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; nil while n is zero
}

func (b *tracker) add(k int) {
	if k == 0 {
		return
	}
	b.mu.Lock()
	if b.n == 0 {
		b.idle = make(chan struct{})
	}
	b.n += k
	b.mu.Unlock()
}

func (b *tracker) done() {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.idle)
		b.idle = nil
	}
	b.mu.Unlock()
}

// wait blocks until no goroutine is counted or ctx ends.
func (b *tracker) wait(ctx context.Context) error {
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

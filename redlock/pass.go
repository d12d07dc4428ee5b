package redlock

import (
	"context"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// handing is the round of an acquire that also released an earlier
// holder's lock (a hand-off, see HandOff), and its tally as the acquire left
// it; r is nil when no round was sent.
type handing struct {
	r  *round
	tl tally
}

// HandOff hands the lock h holds to next, a waiter of the same Locker, in one
// round: every node's acquire script first deletes h's lock (when it still
// holds h.Value) and then makes next's attempt, so the waiter holds the
// lock one round trip after Unlock began instead of two. A node that
// deleted h's lock but did not give it to next announces the release as
// Release does.
//
// It returns what next got (its lock, when its attempt succeeded as
// Acquire would), and the release's outcome: nil once a quorum deleted h's lock (or every node
// answered and no quorum can still hold it), an error wrapping
// strategy.ErrNotHeld when so many nodes did not hold it that it cannot
// have been held by a quorum, else the nodes' failures. Reading the
// release's outcome may wait for nodes that answer after next's attempt
// was decided, each within NodeTimeout.
func (t *technique) HandOff(ctx context.Context, h engine.Held, next engine.Attempt) (engine.Passed, error) {
	g, hd, err := t.acquire(ctx, next, h.Value)
	passed := engine.Passed{Taken: err == nil, Acquired: g}
	if hd.r == nil { // no round was sent
		return passed, t.Release(ctx, h)
	}
	if rerr := hd.released(ctx); rerr != nil {
		return passed, fmt.Errorf("release: %w", rerr)
	}
	return passed, nil
}

// released reads the round's remaining answers until they settle the
// release (see HandOff).
func (hd *handing) released(ctx context.Context) error {
	tl := &hd.tl
	for tl.handed < tl.quorum && tl.pending() > 0 && tl.notHanded <= tl.n-tl.quorum {
		select {
		case a := <-hd.r.answers:
			tl.add(a)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch {
	case tl.handed >= tl.quorum:
		return nil
	case tl.notHanded > tl.n-tl.quorum:
		return fmt.Errorf("%w: %d of %d nodes did not hold it", strategy.ErrNotHeld, tl.notHanded, tl.n)
	case tl.handed > 0 && tl.pending() == 0 && tl.handed+tl.notHanded > tl.n-tl.quorum:
		return nil // the nodes that may still hold it are fewer than a quorum
	}
	return fmt.Errorf("deleted on %d of %d nodes (quorum %d), %d did not hold it: %w",
		tl.handed, tl.n, tl.quorum, tl.notHanded, joined(tl.errs))
}

package redisconn

import (
	"context"
	"sync"
	"time"
)

// Bounded is a context bounded by a deadline of its own, for calls whose
// commands this package bounds through the connections' read deadlines:
// unlike context.WithDeadline's, it starts a timer only when something
// waits on its Done. This package's calls read its deadline and watch
// only its parent's cancellation (cancelDone), so a command pays no timer
// for the bound; a Pool or connection that waits on Done (a redis.Pool
// with Wait set) gets a channel that closes at the deadline, as
// context.WithDeadline's does. It keeps the context.Context contract.
// Create one with WithDeadline; it is safe for concurrent use.
type Bounded struct {
	parent   context.Context
	deadline time.Time // the earlier of parent's and its own

	mu    sync.Mutex
	timed *timed // made by the first Done; nil until then
	ended ended  // how Cancel found it, when timed is nil
}

// timed is a Bounded's context.WithDeadline, made for its Done.
type timed struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// ended is how a Bounded without a Done had ended when Cancel was called.
type ended uint8

const (
	notEnded     ended = iota
	parentEnded        // Err is parent's
	deadlineDone       // context.DeadlineExceeded
	cancelled          // context.Canceled
)

// WithDeadline returns parent bounded by deadline (or by parent's, when
// that is earlier). Call its Cancel when the calls it bounds are done.
func WithDeadline(parent context.Context, deadline time.Time) *Bounded {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return &Bounded{parent: parent, deadline: deadline}
}

// Deadline returns b's deadline; it always has one.
func (b *Bounded) Deadline() (time.Time, bool) { return b.deadline, true }

// Value returns parent's value for key.
func (b *Bounded) Value(key any) any { return b.parent.Value(key) }

// Done returns a channel that closes when the deadline passes, parent
// ends, or Cancel is called. The first call starts its timer.
func (b *Bounded) Done() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timed == nil {
		ctx, cancel := context.WithDeadline(b.parent, b.deadline)
		b.timed = &timed{ctx, cancel}
		if b.ended != notEnded {
			cancel()
		}
	}
	return b.timed.ctx.Done()
}

// Err returns nil until b ends, then parent's error,
// context.DeadlineExceeded or context.Canceled, whichever ended it first.
func (b *Bounded) Err() error {
	b.mu.Lock()
	t, e := b.timed, b.ended
	b.mu.Unlock()
	switch {
	case t != nil:
		return t.ctx.Err()
	case e == parentEnded:
		return b.parent.Err()
	case e == deadlineDone:
		return context.DeadlineExceeded
	case e == cancelled:
		return context.Canceled
	}
	return b.errNow()
}

// errNow is Err for a b that has no Done channel and was not cancelled.
func (b *Bounded) errNow() error {
	if err := b.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(b.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Cancel ends b as cancelled, unless it ended already, and stops its
// timer, if Done started one.
func (b *Bounded) Cancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.timed != nil:
		b.timed.cancel()
	case b.ended != notEnded:
	case b.parent.Err() != nil:
		b.ended = parentEnded
	case !time.Now().Before(b.deadline):
		b.ended = deadlineDone
	default:
		b.ended = cancelled
	}
}

// cancelDone is ctx's Done for a call that bounds its commands by ctx's
// deadline itself: for a Bounded, its parent's, so that no timer starts.
func cancelDone(ctx context.Context) <-chan struct{} {
	if b, ok := ctx.(*Bounded); ok {
		return cancelDone(b.parent)
	}
	return ctx.Done()
}

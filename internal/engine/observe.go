package engine

// The calls to Config.Observer, for every technique, in one place. Every
// call site checks l.cfg.Observer != nil first, so a Locker without an
// observer pays one comparison per call and nothing else: no time reading,
// no event, no allocation (BenchmarkObserver).

import (
	"context"
	"errors"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/strategy"
)

// unobserved reports an error that is not an event: bad input, or an
// injected crash (a client that "died" tells nobody).
func unobserved(err error) bool {
	return errors.Is(err, strategy.ErrInvalidConfig) || errors.Is(err, fault.ErrCrashed)
}

// observeTry reports the outcome of a TryLock whose attempt started at
// start (lease and err are what attempt returned).
func (l *Locker) observeTry(ctx context.Context, key string, start time.Time, lease strategy.Lease, err error) {
	o := l.cfg.Observer
	if err == nil {
		o.Acquired(ctx, strategy.AcquiredEvent{
			Technique: l.props.Name, Op: strategy.OpTryLock, Key: key,
			Token: lease.Token(), Fence: lease.Fence(), Wait: time.Since(start), Attempts: 1,
		})
		return
	}
	if unobserved(err) {
		return
	}
	e := strategy.NotAcquiredEvent{
		Technique: l.props.Name, Op: strategy.OpTryLock, Key: key,
		Wait: time.Since(start), Attempts: 1, Err: l.opError("trylock", key, err),
	}
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		e.Reason = strategy.ReasonTaken
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		e.Reason = strategy.ReasonContext
	default:
		e.Reason, e.LastFailure = strategy.ReasonUnreachable, err
	}
	o.NotAcquired(ctx, e)
}

// observeLock reports the outcome of the Lock call of w and s, which
// returns lease and err: a hand-off it received (HandedOff), then Acquired,
// or NotAcquired.
func (l *Locker) observeLock(ctx context.Context, w *line.Waiter, s *waitState, lease strategy.Lease, err error) {
	o := l.cfg.Observer
	wait, attempts := time.Since(w.Arrived()), w.Tries()
	if err == nil {
		token := lease.Token()
		// A release in Redis hands the lock off under the waiter's name:
		// by a notice (Place.HandedOff), or found by the waiter's next attempt.
		handOff, local := s.at.HandedOff()
		handedOff := handOff || token == w.Name()
		if handedOff {
			o.HandedOff(ctx, strategy.HandOffEvent{
				Technique: l.props.Name, Key: s.key, Token: token, Fence: lease.Fence(),
				Wait: wait, Attempts: attempts, Local: local,
			})
		}
		o.Acquired(ctx, strategy.AcquiredEvent{
			Technique: l.props.Name, Op: strategy.OpLock, Key: s.key,
			Token: token, Fence: lease.Fence(), Wait: wait, Attempts: attempts,
			HandedOff: handedOff,
		})
		return
	}
	if unobserved(err) {
		return
	}
	e := strategy.NotAcquiredEvent{
		Technique: l.props.Name, Op: strategy.OpLock, Key: s.key,
		Wait: wait, Attempts: attempts, Err: err, LastFailure: s.lastFailure,
	}
	switch {
	case errors.Is(err, strategy.ErrClosed):
		e.Reason = strategy.ReasonClosed
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		e.Reason = strategy.ReasonContext
	case s.lastFailure != nil:
		e.Reason = strategy.ReasonUnreachable
	default:
		e.Reason = strategy.ReasonTaken
	}
	o.NotAcquired(ctx, e)
}

// observeRelease reports an Unlock whose release returned err (as the
// technique returned it); passedOn: the lock went to a local waiter in the
// same step, which spends the lease whatever the release returned. Else a
// Redis failure is no event: the lease is not spent.
func (s *Lease) observeRelease(ctx context.Context, err error, passedOn bool) {
	notHeld := errors.Is(err, strategy.ErrNotHeld)
	if err != nil && !notHeld && !passedOn {
		return
	}
	o := s.l.cfg.Observer
	now := time.Now()
	token, deadline, held := s.Token(), s.Deadline(), s.held()
	if notHeld || now.After(deadline) {
		s.observeLost(ctx, strategy.OpUnlock, token, held, now.Sub(deadline), notHeld, err)
	}
	o.Released(ctx, strategy.ReleasedEvent{
		Technique: s.l.props.Name, Key: s.key, Token: token, Fence: s.fence,
		Held: held, NotHeld: notHeld, PassedOn: passedOn,
	})
}

// observeLost reports that op (strategy.OpUnlock or OpExtend) found the
// lease lost: not held (err, which wraps strategy.ErrNotHeld, goes into the
// event as the call returns it), or late after the Deadline passed.
func (s *Lease) observeLost(ctx context.Context, op, token string, held, late time.Duration, notHeld bool, err error) {
	e := strategy.LostEvent{
		Technique: s.l.props.Name, Op: op, Key: s.key, Token: token, Fence: s.fence,
		Reason: strategy.LostDeadlinePassed, Held: held, Late: max(late, 0),
	}
	if notHeld {
		e.Reason, e.Err = strategy.LostNotHeld, s.l.opError(op, s.key, err)
	}
	s.l.cfg.Observer.Lost(ctx, e)
}

// observeExtend reports an Extend that was sent at start, when the lease's
// Deadline was before, and returned err (as the technique returned it);
// ttl is the lifetime it asked for. A Redis failure is no event.
func (s *Lease) observeExtend(ctx context.Context, start, before time.Time, ttl time.Duration, err error) {
	notHeld := errors.Is(err, strategy.ErrNotHeld)
	if err != nil && !notHeld {
		return
	}
	o := s.l.cfg.Observer
	token, deadline, held := s.Token(), s.Deadline(), s.held()
	if notHeld || start.After(before) {
		s.observeLost(ctx, strategy.OpExtend, token, held, start.Sub(before), notHeld, err)
	}
	if notHeld {
		return
	}
	o.Extended(ctx, strategy.ExtendedEvent{
		Technique: s.l.props.Name, Key: s.key, Token: token, Fence: s.fence,
		TTL: ttl, Deadline: deadline, Held: held,
	})
}

// held returns how long the lease has held its lock: since just before the
// acquiring attempt was sent.
func (s *Lease) held() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.deadline) + s.span
}

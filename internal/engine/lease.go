package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// Lease is a held lock. Extend and Unlock may be called concurrently; they
// run one at a time. Only an Unlock that succeeds or finds the lock no
// longer ours (strategy.ErrNotHeld), or one that handed the lock to a
// waiter (line.HandOffer), spends the lease; further calls then return
// ErrNotHeld without touching Redis. After any other failure (ctx ended, Redis
// unreachable, a reply lost) the lease is not spent and Unlock or Extend
// may be called again.
type Lease struct {
	l     *Locker
	key   string // as the caller named it
	fence uint64
	// span is Deadline minus the moment just before the acquiring attempt
	// was sent, kept across Extends, so that the Observer can tell how long
	// the lock was held (8 bytes rather than a time.Time: Lease stays in
	// its allocation size class).
	span time.Duration

	rkey string
	keys []any // Acquired.Keys, for Held.Keys

	// op serialises Extend and Unlock; a channel rather than a mutex so that
	// waiting for it honours ctx.
	op chan struct{}

	mu       sync.Mutex // guards the fields below
	value    string
	deadline time.Time
	spent    bool
}

var _ strategy.Lease = (*Lease)(nil)

func newLease(l *Locker, key, rkey, token string, start time.Time, g Acquired) *Lease {
	validity := g.Validity
	if validity == 0 {
		validity = l.cfg.TTL
	}
	value := g.Value
	if value == "" {
		value = token
	}
	return &Lease{
		l: l, key: key, fence: g.Fence,
		op: make(chan struct{}, 1), rkey: rkey, keys: g.Keys, value: value,
		deadline: start.Add(validity), span: validity,
	}
}

// Key returns the key as the caller named it.
func (s *Lease) Key() string { return s.key }

// Token returns the value this holder wrote to Redis.
func (s *Lease) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// Fence returns the fencing token, 0 where the technique issues none.
func (s *Lease) Fence() uint64 { return s.fence }

// Deadline returns the local time after which the holder must assume it
// lost the lock.
func (s *Lease) Deadline() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline
}

// Extend sets the lock's remaining lifetime to ttl (zero means the Locker's
// TTL) and moves Deadline. Errors wrap strategy.ErrNotHeld when the lock was
// lost or released, strategy.ErrUnsupported where the technique cannot
// extend, strategy.ErrInvalidConfig for a ttl below strategy.MinTTL,
// strategy.ErrClosed after the Locker's Close (without touching Redis; the
// lease can still Unlock), and the Redis failure otherwise (wrapping
// ctx.Err() when ctx ended; a ctx that has already ended returns its error
// before anything is sent). Extend never spends the lease: after any
// failure Extend and Unlock may be called again.
func (s *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	if err := s.l.checkOpen("extend", s.key); err != nil {
		return err
	}
	ttl, err := s.l.ttlOrDefault(ttl)
	if err != nil {
		return s.l.opError("extend", s.key, err)
	}
	h, err := s.begin(ctx, "extend", fault.ExtendBefore)
	if err != nil {
		return err
	}
	defer s.end()
	start := time.Now()
	g, err := s.l.tech.Extend(ctx, h, ttl)
	if err != nil {
		if s.l.cfg.Observer != nil {
			s.observeExtend(ctx, start, s.Deadline(), ttl, err)
		}
		return s.l.opError("extend", s.key, err)
	}
	validity := g.Validity
	if validity == 0 {
		validity = ttl
	}
	if s.l.cfg.Observer != nil { // runs once mu is unlocked; reads the Deadline before
		defer s.observeExtend(ctx, start, s.Deadline(), ttl, nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.Value != "" {
		s.value = g.Value
	}
	next := start.Add(validity)
	s.span += next.Sub(s.deadline)
	s.deadline = next
	return nil
}

// Unlock releases the lock. Errors wrap strategy.ErrNotHeld when the lock
// was no longer ours, and the Redis failure otherwise (wrapping ctx.Err()
// when ctx ended). Success and ErrNotHeld spend the lease; after any other
// failure it is not spent, and Unlock may be called again: a ctx that has
// already ended returns its error before anything is sent. It works after
// the Locker's Close too: closing a Locker does not strand its locks until
// their TTL.
func (s *Lease) Unlock(ctx context.Context) error {
	h, err := s.begin(ctx, "unlock", fault.ReleaseBefore)
	if err != nil {
		return err
	}
	defer s.end()
	passed, err := s.l.line.Release(ctx, h) // may hand the lock to a waiter
	if passed {
		s.spendUnless(nil) // the lock is the waiter's now, whatever the release reported
	} else {
		s.spendUnless(err)
	}
	if s.l.cfg.Observer != nil {
		s.observeRelease(ctx, err, passed)
	}
	if err != nil {
		return s.l.opError("unlock", s.key, err)
	}
	return nil
}

// spendUnless marks the lease spent when the release's outcome err is
// final: nil (released) or strategy.ErrNotHeld (no longer ours). Any other
// failure leaves the lease to be released again.
func (s *Lease) spendUnless(err error) {
	if err != nil && !errors.Is(err, strategy.ErrNotHeld) {
		return
	}
	s.mu.Lock()
	s.spent = true
	s.mu.Unlock()
}

// begin starts op (Extend or Unlock) on the lease, once any Extend or
// Unlock in progress finished, and returns what the lock holds; the
// caller then calls end. It fails, and the caller must not call end,
// when ctx has already ended (even when the lease is free: the call must
// not start) or ends first, when the lease is spent (strategy.ErrNotHeld),
// or when the fault point point fails.
func (s *Lease) begin(ctx context.Context, op, point string) (Held, error) {
	if err := ctx.Err(); err != nil {
		return Held{}, s.l.opError(op, s.key, err)
	}
	select {
	case s.op <- struct{}{}:
	case <-ctx.Done():
		return Held{}, s.l.opError(op, s.key, fmt.Errorf("lease busy: %w", ctx.Err()))
	}
	s.mu.Lock()
	h, spent := Held{Key: s.rkey, Value: s.value, Fence: s.fence, Keys: s.keys}, s.spent
	s.mu.Unlock()
	var err error
	if spent {
		err = fmt.Errorf("%w: lease already released", strategy.ErrNotHeld)
	} else if err = fault.At(ctx, point); err == nil {
		return h, nil
	}
	s.end()
	return Held{}, s.l.opError(op, s.key, err)
}

// end ends the op begin started.
func (s *Lease) end() { <-s.op }

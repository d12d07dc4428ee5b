package strategytest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// takeoverTTL is the waiters' TTL in expiredTakeover: long enough that
// the first one's lease is still running when the second returns.
const takeoverTTL = 10 * time.Second

// expiredTakeover is article 004's story of method 2: A dies holding the
// lock and its lock expires (its stored time passes, or Redis expires the
// key; where it never expires, another client's DEL frees it). Two waiters,
// B and C (the article's p2 and p3), then take it over. Where the
// technique has a takeover point (windows.takeover), both are stopped
// there, each having seen the lock expired; B goes on first, then C. Where
// it has none, both try at once. If both then hold the lock, mutual
// exclusion is broken.
func expiredTakeover(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: shortTTL})
	if err != nil {
		fail(r, "build", err)
		return
	}
	r.Attempts = 1
	ctxA := as(ctx, "A")
	a, err := lockWithin(ctxA, l, "takeover")
	if err != nil {
		fail(r, "A Lock", err)
		return
	}
	e.rec.note("A", "A dies holding the lock: its lease is dropped, never unlocked")
	freed, err := e.freeForever(ctx, l.Properties(), "takeover")
	if err != nil {
		fail(r, "free A's lock", err)
		return
	}
	w, known := windowsOf(l.Properties().Name)
	if err := e.awaitExpired(ctx, a, w, known, "takeover"); err != nil {
		fail(r, "wait for A's lock to expire", err)
		return
	}
	lb, err := e.locker(strategy.Config{TTL: takeoverTTL})
	if err != nil {
		fail(r, "build B", err)
		return
	}
	lc, err := e.locker(strategy.Config{TTL: takeoverTTL})
	if err != nil {
		fail(r, "build C", err)
		return
	}
	ctxB, ctxC := as(ctx, "B"), as(ctx, "C")
	var (
		b, c       takeoverTry
		how        string
		tryB, tryC = b.op(lb), c.op(lc)
	)
	if w.takeover != "" {
		how = "B and C both found A's lock expired and stopped at " + w.takeover + "; B went on, then C"
		err = orderedTakeover(ctxB, ctxC, e.rec, w.takeover, tryB, tryC)
	} else {
		how = "B and C tried to take A's expired lock at once"
		concurrentTakeover(ctxB, ctxC, tryB, tryC)
	}
	if err != nil {
		fail(r, "take over", err)
		return
	}
	// B lets go first, as p2 does in the article: a plain DEL there
	// deletes C's lock.
	defer c.unlock(ctxC)
	defer b.unlock(ctxB)
	r.Account = freed + how
	switch {
	case b.err != nil && !errors.Is(b.err, strategy.ErrNotAcquired):
		fail(r, "B TryLock", b.err)
	case c.err != nil && !errors.Is(c.err, strategy.ErrNotAcquired):
		fail(r, "C TryLock", c.err)
	case b.lease != nil && c.lease != nil:
		tl := newTimeline()
		tl.hold("B", b.at, b.lease.Deadline())
		tl.hold("C", c.at, c.lease.Deadline())
		r.Violations = 1
		r.Account += ": both took it"
		if ov := tl.overlaps(); len(ov) > 0 {
			r.Account += ", " + ov[0].describe("takeover")
		}
	case b.lease == nil && c.lease == nil:
		r.Account += fmt.Sprintf(": neither took it (B: %v; C: %v)", b.err, c.err)
	case b.lease != nil:
		r.Account += fmt.Sprintf(": B took it, C was refused (%v)", c.err)
	default:
		r.Account += fmt.Sprintf(": C took it, B was refused (%v)", b.err)
	}
}

// takeoverTry is one waiter's attempt: the lease it got, when, and the
// error.
type takeoverTry struct {
	lease strategy.Lease
	at    time.Time
	err   error
}

// op returns the attempt as an operation for stopAt: one try (probe),
// whose outcome it keeps in t.
func (t *takeoverTry) op(l strategy.Locker) func(context.Context) error {
	return func(ctx context.Context) error {
		t.lease, t.err = probe(ctx, l, "takeover")
		t.at = time.Now()
		return t.err
	}
}

// unlock releases the lease t got, if any.
func (t *takeoverTry) unlock(ctx context.Context) {
	if t.lease != nil {
		_ = t.lease.Unlock(ctx)
	}
}

// orderedTakeover stops tryB then tryC at point, each having found the
// lock expired, then lets B finish before C goes on. It returns an error
// only when a waiter did not reach point.
func orderedTakeover(ctxB, ctxC context.Context, rec *recorder, point string, tryB, tryC func(context.Context) error) error {
	resumeB, err := stopAt(ctxB, rec, point, tryB)
	if err != nil {
		_ = resumeB()
		return fmt.Errorf("B: %w", err)
	}
	resumeC, err := stopAt(ctxC, rec, point, tryC)
	if err != nil {
		_ = resumeB()
		_ = resumeC()
		return fmt.Errorf("C: %w", err)
	}
	_ = resumeB() // its outcome is in tryB's takeoverTry
	_ = resumeC()
	return nil
}

// concurrentTakeover runs tryB and tryC at once and waits for both.
func concurrentTakeover(ctxB, ctxC context.Context, tryB, tryC func(context.Context) error) {
	var wg sync.WaitGroup
	wg.Go(func() { _ = tryB(ctxB) })
	wg.Go(func() { _ = tryC(ctxC) })
	wg.Wait()
}

// awaitExpired returns once the lock name that a held has expired: where
// the technique keeps its expiry time in the value (w.takeover set), once
// the clock that time was written with is past the time stored; elsewhere once Redis has removed the key on every node. For a
// technique the suite does not know (known false) it waits for both: a's
// Deadline, and the key under lockzoo's layout (protocol.LockKeys) gone,
// which a peer that keeps its lock elsewhere never had. It gives up after
// waitBound.
func (e *env) awaitExpired(ctx context.Context, a strategy.Lease, w windows, known bool, name string) error {
	if w.takeover != "" || !known {
		wait, what := time.Until(a.Deadline()), "A's Deadline to pass"
		if w.takeover != "" {
			// The stored time, in Unix ms, can come a moment after the
			// Deadline, which counts from the attempt's start; it has
			// passed once the clock is past it.
			v, err := e.lockValue(ctx, 0, name)
			if err != nil {
				return fmt.Errorf("read A's stored time: %w", err)
			}
			stored, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("A's lock holds %q, want a time in Unix ms: %w", v, err)
			}
			wait, what = time.Until(time.UnixMilli(stored+1)), "A's stored time to pass"
		}
		e.rec.note("", "B and C wait %v for %s", wait.Round(time.Millisecond), what)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		if known {
			return nil
		}
	}
	deadline := time.Now().Add(waitBound)
	for i := range e.pools {
		for {
			v, err := e.lockValue(ctx, i, name)
			if err == nil && v == "" {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("node %d: lock %s still holds %q (%v) after %v", i+1, name, v, err, waitBound)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	e.rec.note("", "A's lock has expired: the key is gone")
	return nil
}

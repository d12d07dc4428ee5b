package strategytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// Sizes and times of the scenarios, small enough for the whole suite to run
// in about a minute per technique.
const (
	mutexWorkers  = 8
	mutexSections = 25 // per worker
	shortTTL      = time.Second
	waitBound     = 15 * time.Second // how long a client waits for a lock that should come
	// foreverBound is how long crash-liveness waits on a technique whose
	// lock never expires: three TTLs.
	foreverBound = 3 * shortTTL
	// dataTTL is how long the keys a scenario writes itself (a counter, a
	// resource) live should the sweep at its end never run (the process
	// killed): a scenario ends within scenarioBound.
	dataTTL = 2 * scenarioBound
)

// mutualExclusion: workers contend for one key and, inside the lock, read a
// counter from Redis and write it back plus one. Violations are overlapping
// critical sections on the shared clock plus lost counter updates.
func mutualExclusion(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		fail(r, "build", err)
		return
	}
	counter := e.prefix + "counter"
	if _, err := e.do(ctx, 0, "DEL", counter); err != nil {
		fail(r, "reset counter", err)
		return
	}
	tl := newTimeline()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range mutexWorkers {
		wg.Go(func() {
			who := fmt.Sprintf("worker %d", w+1)
			for range mutexSections {
				if err := section(ctx, e, l, tl, who, counter); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fail(r, "worker", err)
		return
	}
	got, err := redis.Int(e.do(ctx, 0, "GET", counter))
	if err != nil {
		fail(r, "read counter", err)
		return
	}
	want := mutexWorkers * mutexSections
	lost := want - got
	ov := tl.overlaps()
	r.Attempts = want
	r.Violations = len(ov) + max(lost, 0)
	switch {
	case len(ov) > 0:
		r.Account = fmt.Sprintf("%s; %d overlaps, counter %d/%d", ov[0].describe("mutex"), len(ov), got, want)
	case lost != 0:
		r.Account = fmt.Sprintf("counter %d/%d: %d updates lost", got, want, lost)
	default:
		r.Account = fmt.Sprintf("%d critical sections by %d workers, no overlap, counter %d/%d", want, mutexWorkers, got, want)
	}
}

// section is one critical section of mutualExclusion.
func section(ctx context.Context, e *env, l strategy.Locker, tl *timeline, who, counter string) error {
	ctx = as(ctx, who)
	// Eight workers' sections of a millisecond or so each wait well under
	// a second; a Lock that misses a release (rueidislock's can) gives up
	// at waitBound rather than holding the run for a minute, as it did.
	lockCtx, cancel := context.WithTimeout(ctx, waitBound)
	defer cancel()
	lease, err := l.Lock(lockCtx, "mutex")
	if err != nil {
		return fmt.Errorf("%s: Lock: %w", who, err)
	}
	exit := tl.enter(who)
	n, err := redis.Int(e.do(ctx, 0, "GET", counter))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		exit()
		return fmt.Errorf("%s: GET: %w", who, err)
	}
	_, err = e.do(ctx, 0, "SET", counter, n+1, "PX", dataTTL.Milliseconds())
	exit()
	if err != nil {
		return fmt.Errorf("%s: SET: %w", who, err)
	}
	if err := unlock(ctx, lease); err != nil {
		return fmt.Errorf("%s: Unlock: %w", who, err)
	}
	return nil
}

// unlock releases lease as a careful user does: a release that failed
// with a Redis failure (a node that timed out on a loaded machine, say) is
// sent again until it is answered, the lease's Deadline passes or ctx
// ends. After such a failure ErrNotHeld means an earlier try deleted the
// lock and only its reply was lost; on the first try it is returned.
func unlock(ctx context.Context, lease strategy.Lease) error {
	err := lease.Unlock(ctx)
	for err != nil && !errors.Is(err, strategy.ErrNotHeld) && time.Now().Before(lease.Deadline()) {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
		again := lease.Unlock(ctx)
		if again == nil || errors.Is(again, strategy.ErrNotHeld) {
			return nil
		}
		err = again
	}
	return err
}

// crashLiveness: A dies holding the lock (its lease is dropped, never
// released); B must get the lock once the TTL has passed. B waits
// waitBound, or foreverBound for a technique whose lock never expires:
// waiting longer would show nothing more.
func crashLiveness(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: shortTTL})
	if err != nil {
		fail(r, "build", err)
		return
	}
	r.Attempts = 1
	if _, err := lockWithin(as(ctx, "A"), l, "crash"); err != nil {
		fail(r, "A Lock", err)
		return
	}
	e.rec.note("A", "A dies holding the lock: its lease is dropped, never unlocked")
	crashed := time.Now()
	bound, why := waitBound, ""
	if !expires(l.Properties()) {
		bound, why = foreverBound, ", a lock with no expiry"
	}
	waitCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	ctxB := as(ctx, "B")
	lease, err := l.Lock(as(waitCtx, "B"), "crash")
	if err != nil {
		r.Violations = 1
		r.Account = fmt.Sprintf("B could not get the lock %v after its holder crashed (TTL %v%s): %v", bound, shortTTL, why, err)
		return
	}
	r.Account = fmt.Sprintf("B got the lock %v after A crashed holding it (TTL %v)", time.Since(crashed).Round(time.Millisecond), shortTTL)
	_ = lease.Unlock(ctxB)
}

// atomicAcquire: A dies between the steps of its acquire (for a one-step
// acquire, right after it). One and a half TTLs later, B tries once: a lock
// that is still held has no expiry and nobody to release it.
func atomicAcquire(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: shortTTL})
	if err != nil {
		fail(r, "build", err)
		return
	}
	r.Attempts = 1
	point := fault.AcquireAfter
	if w, _ := windowsOf(l.Properties().Name); w.midAcquire != "" {
		point = w.midAcquire
	}
	_, err = lockWithin(fault.With(as(ctx, "A"), e.rec.crash(point)), l, "atomic")
	if err != nil && !errors.Is(err, fault.ErrCrashed) {
		fail(r, "A Lock", err)
		return
	}
	wait := shortTTL*3/2 + 250*time.Millisecond
	e.rec.note("B", "B waits %v (TTL %v) before it tries", wait, shortTTL)
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		fail(r, "wait", ctx.Err())
		return
	}
	ctxB := as(ctx, "B")
	lease, err := probe(ctxB, l, "atomic")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		r.Violations = 1
		r.Account = fmt.Sprintf("A died at %s; %v later (TTL %v) the lock was still held, with no expiry and no live holder", point, wait, shortTTL)
	case err != nil:
		fail(r, "B TryLock", err)
	default:
		r.Account = fmt.Sprintf("A died at %s; the lock expired with its TTL and B took it %v later", point, wait)
		_ = lease.Unlock(ctxB)
	}
}

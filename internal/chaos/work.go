package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// sectionBound bounds a section's two commands on the healthy counter node.
const sectionBound = 5 * time.Second

// retryPause is the wait between two Unlock attempts of one lease.
const retryPause = 20 * time.Millisecond

// work is one worker: until ctx ends, it locks a key drawn from rng, runs
// the section if the lease is still valid, and releases the lease. It
// returns an error only when the counter node fails, which ends the run.
func (r *run) work(ctx context.Context, l strategy.Locker, who string, rng *rand.Rand) error {
	named := r.name(ctx, who)
	for ctx.Err() == nil {
		key := r.cfg.Keys[rng.IntN(len(r.cfg.Keys))]
		lockCtx, cancel := context.WithTimeout(named, r.cfg.LockTimeout)
		called := time.Now()
		lease, err := l.Lock(lockCtx, key)
		returned := time.Now()
		cancel()
		if err != nil {
			if errors.Is(err, strategy.ErrClosed) {
				return nil
			}
			if ctx.Err() == nil {
				r.check.count(&r.report.FailedLocks)
			}
			continue
		}
		if r.check.granted(who, lease, called, returned) {
			if err := r.section(named, who, lease); err != nil {
				r.release(named, lease)
				return err
			}
		}
		r.release(named, lease)
	}
	return nil
}

// section reads the key's counter on the healthy node and writes it back
// plus one, between the checker's enter and exit. The end of the run does
// not cut it short.
func (r *run) section(ctx context.Context, who string, lease strategy.Lease) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sectionBound)
	defer cancel()
	key := lease.Key()
	counter := CounterKey(r.cfg.Prefix, key)
	r.check.enter(who, lease)
	n, err := redis.Int(r.counter(ctx, "GET", counter))
	if err == nil || errors.Is(err, redis.ErrNil) {
		_, err = r.counter(ctx, "SET", counter, n+1)
	}
	r.check.exit(key, err == nil)
	if err != nil {
		return fmt.Errorf("lockzoo: chaos: %s: counter of %s on the healthy node: %w", who, key, err)
	}
	return nil
}

// release unlocks lease, retrying, as the lease rules allow, an Unlock
// that failed other than with ErrNotHeld, until one TTL has passed (by
// then the lock has expired anyway). The end of the run does not stop it.
func (r *run) release(ctx context.Context, lease strategy.Lease) {
	ctx = context.WithoutCancel(ctx)
	giveUp := time.Now().Add(r.cfg.TTL)
	for {
		uctx, cancel := context.WithTimeout(ctx, r.cfg.LockTimeout)
		err := lease.Unlock(uctx)
		cancel()
		switch {
		case err == nil, errors.Is(err, strategy.ErrClosed):
			return
		case errors.Is(err, strategy.ErrNotHeld):
			r.check.count(&r.report.NotHeld)
			return
		case time.Now().After(giveUp):
			r.check.count(&r.report.FailedUnlocks)
			return
		}
		time.Sleep(retryPause)
	}
}

// lockable locks every key once, at the same time, the faults healed and
// the workers gone, and records how long each took; a key not locked
// within LockableWait counts as Unlockable. Each key is tried through
// a different Locker, as a new holder in any process would.
func (r *run) lockable(ctx context.Context) {
	start := time.Now()
	var wg sync.WaitGroup
	for i, key := range r.cfg.Keys {
		l := r.lockers[i%len(r.lockers)]
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(r.name(ctx, "after healing"), r.cfg.LockableWait)
			defer cancel()
			lease, err := l.Lock(lctx, key)
			took := time.Since(start)
			r.check.mu.Lock()
			r.report.Lockable[key] = took
			r.report.MaxLockable = max(r.report.MaxLockable, took)
			switch {
			case err != nil:
				r.report.Unlockable++
				r.check.example("%s could not be locked %v after healing: %v", key, took.Round(time.Millisecond), err)
			case took > LockableBound:
				r.check.example("%s took %v to lock after healing, want at most %v", key, took.Round(time.Millisecond), LockableBound)
			}
			r.check.mu.Unlock()
			if err == nil {
				r.release(lctx, lease)
			}
		})
	}
	wg.Wait()
}

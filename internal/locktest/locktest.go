package locktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/strategy"
)

// Factory builds the technique under test over the given pool.
type Factory func(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error)

// NoLeaks registers a goroutine-leak check that runs after every other
// cleanup of t (so after the Redis nodes are torn down and the Lockers
// MustNew built are closed). Call it first in a test. Tests that use it
// must not run in parallel.
//
// There is no grace beyond goleak's own short retries: a Locker's
// goroutines end when Close returns, so a test closes what it builds.
func NoLeaks(t testing.TB) {
	t.Helper()
	NoLeaksExcept(t)
}

// NoLeaksExcept is NoLeaks that ignores the goroutines whose top function
// is one of topFunctions (as goleak.IgnoreTopFunction names them): for a
// peer library whose own goroutine can outlive its Close, which the peers
// module records as a finding about that library, not a leak of lockzoo's.
func NoLeaksExcept(t testing.TB, topFunctions ...string) {
	t.Helper()
	opts := make([]goleak.Option, len(topFunctions))
	for i, f := range topFunctions {
		opts[i] = goleak.IgnoreTopFunction(f)
	}
	t.Cleanup(func() {
		if err := goleak.Find(opts...); err != nil {
			t.Errorf("goroutines left behind: %v", err)
		}
	})
}

// VerifyTestMain is goleak.VerifyTestMain: it runs the tests and, when
// they passed, fails the run (exit status 1) if goroutines are left.
func VerifyTestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Closer is a Locker's Close; every lockzoo Locker has it.
type Closer interface{ Close() error }

// MustNew builds a Locker with f or fails the test, and closes it in
// t.Cleanup (failing the test if Close fails).
func MustNew(t testing.TB, f Factory, pool strategy.Pool, cfg strategy.Config) strategy.Locker {
	t.Helper()
	l, err := f(pool, cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	CloseOnCleanup(t, l)
	return l
}

// CloseOnCleanup closes l, when it has Close, in t.Cleanup, and fails the
// test if Close fails.
func CloseOnCleanup(t testing.TB, l any) {
	t.Helper()
	c, ok := l.(Closer)
	if !ok {
		return
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close() = %v, want nil", err)
		}
	})
}

// Overlap detects two holders inside a critical section at once. Its zero
// value is ready to use and safe for concurrent use.
type Overlap struct {
	inside     atomic.Int32
	violations atomic.Int64
}

// Enter marks a holder entering its critical section.
func (o *Overlap) Enter() {
	if o.inside.Add(1) != 1 {
		o.violations.Add(1)
	}
}

// Exit marks a holder leaving its critical section.
func (o *Overlap) Exit() { o.inside.Add(-1) }

// Violations returns how many entries found another holder inside.
func (o *Overlap) Violations() int64 { return o.violations.Load() }

// Contention runs workers goroutines that each take key iterations times
// through Lock and, inside the lock, read a counter from Redis and write it
// back plus one. It fails the test unless the counter ends at exactly
// workers*iterations and no two holders ever overlapped.
func Contention(t *testing.T, l strategy.Locker, pool *redis.Pool, key string, workers, iterations int) {
	t.Helper()
	lockers := make([]strategy.Locker, workers)
	for i := range lockers {
		lockers[i] = l
	}
	ContentionApart(t, lockers, pool, key, iterations)
}

// ContentionApart is Contention with a worker per Locker in lockers, as
// with separate processes: their waiters meet only in Redis. pool holds
// the counter ("counter:" + key).
func ContentionApart(t *testing.T, lockers []strategy.Locker, pool *redis.Pool, key string, iterations int) {
	t.Helper()
	workers := len(lockers)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	counter := "counter:" + key
	if _, err := redis.DoContext(mustConn(t, pool), ctx, "DEL", counter); err != nil {
		t.Fatalf("DEL counter = %v, want nil", err)
	}
	var (
		overlap Overlap
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for _, l := range lockers {
		wg.Go(func() {
			for range iterations {
				if err := increment(ctx, l, pool, key, counter, &overlap); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("worker: %v", err)
	}
	got, err := redis.Int(redis.DoContext(mustConn(t, pool), ctx, "GET", counter))
	if err != nil {
		t.Fatalf("GET counter = %v, want nil", err)
	}
	if want := workers * iterations; got != want {
		t.Errorf("counter = %d, want %d (lost updates: %d)", got, want, want-got)
	}
	if v := overlap.Violations(); v != 0 {
		t.Errorf("overlapping holders = %d, want 0", v)
	}
}

func increment(ctx context.Context, l strategy.Locker, pool *redis.Pool, key, counter string, o *Overlap) error {
	lease, err := l.Lock(ctx, key)
	if err != nil {
		return fmt.Errorf("Lock() = %w", err)
	}
	o.Enter()
	conn, err := pool.GetContext(ctx)
	if err != nil {
		o.Exit()
		return err
	}
	n, err := redis.Int(redis.DoContext(conn, ctx, "GET", counter))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		conn.Close()
		o.Exit()
		return fmt.Errorf("GET = %w", err)
	}
	_, err = redis.DoContext(conn, ctx, "SET", counter, n+1)
	conn.Close()
	o.Exit()
	if err != nil {
		return fmt.Errorf("SET = %w", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		return fmt.Errorf("Unlock() = %w", err)
	}
	return nil
}

// mustConn returns a connection from pool, closed in t.Cleanup.
func mustConn(t testing.TB, pool *redis.Pool) redis.Conn {
	t.Helper()
	c, err := pool.GetContext(context.Background())
	if err != nil {
		t.Fatalf("GetContext() = %v, want nil", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// BusyBound is the context bound of a test that runs many Lock and
// Unlock calls at once (EachWorker, KillWhileBusy): it ends a test that
// hangs, and is no speed target, since such a test takes seconds on a
// loaded machine 3x slower than a quiet one, not a minute.
const BusyBound = time.Minute

// BusyTTL is the lock TTL of such a test that asserts no lock is left
// held by nobody until its TTL: twice BusyBound, so that a Lock that
// waits for a stranded lock to expire fails the test at BusyBound.
const BusyTTL = 2 * BusyBound

// EachWorker runs work in workers goroutines, each on its own key (prefix
// and the worker's number), waits for them all and reports every error
// they return as t's error.
func EachWorker(t testing.TB, workers int, prefix string, work func(key string) error) {
	t.Helper()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if err := work(fmt.Sprint(prefix, w)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// RisingPairs returns the work of one EachWorker goroutine that makes
// pairs Lock+Unlock cycles of l on its key within ctx: every Lock must
// hold that key with a fencing token above the last one the goroutine
// saw, and every Unlock must release it.
func RisingPairs(ctx context.Context, l strategy.Locker, pairs int) func(key string) error {
	return func(key string) error {
		var last uint64
		for range pairs {
			lease, err := l.Lock(ctx, key)
			if err != nil {
				return fmt.Errorf("Lock(%q) = %v, want nil", key, err)
			}
			if lease.Key() != key || lease.Fence() <= last {
				return fmt.Errorf("Lock(%q) = a lease of %q with fence %d, want %q with a fence above %d", key, lease.Key(), lease.Fence(), key, last)
			}
			last = lease.Fence()
			if err := lease.Unlock(ctx); err != nil {
				return fmt.Errorf("Unlock(%q) = %v, want nil", key, err)
			}
		}
		return nil
	}
}

package locktest

import (
	"context"
	"errors"
	"fmt"
	"os"
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
// cleanup of t (so after the Redis nodes are torn down). Call it first in a
// test. Tests that use it must not run in parallel.
//
// Some goroutines end shortly after the call that ends them returns (a
// release-notice connection closes after the last waiter leaves), so the
// check looks again for up to leakGrace before it reports a leak: on a
// loaded machine that can take longer than goleak's own retries.
func NoLeaks(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		if err := findLeaks(); err != nil {
			t.Errorf("goroutines left behind after %v: %v", leakGrace, err)
		}
	})
}

// VerifyTestMain is goleak.VerifyTestMain with NoLeaks's grace: it runs the
// tests and, when they passed, fails the run (exit status 1) if goroutines
// are still left leakGrace after the tests ended. Notice connections, for
// one, end notify.Linger after their last use.
func VerifyTestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := findLeaks(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left behind after %v: %v\n", leakGrace, err)
			code = 1
		}
	}
	os.Exit(code)
}

// findLeaks waits up to leakGrace for the goroutines that goleak reports
// to end, and returns its last report, or nil once there is none.
func findLeaks() error {
	deadline := time.Now().Add(leakGrace)
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leakGrace bounds how long NoLeaks waits for goroutines to end.
const leakGrace = 10 * time.Second

// MustNew builds a Locker with f or fails the test.
func MustNew(t testing.TB, f Factory, pool strategy.Pool, cfg strategy.Config) strategy.Locker {
	t.Helper()
	l, err := f(pool, cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	return l
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

// The conformance checks of how calls treat their context and their pool:
// ended contexts, pools that return no connection, connections without
// redis.ConnWithContext.

package locktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// deadCalls is how many calls with an ended context testDeadContext makes.
const deadCalls = 1000

// testDeadContext: a call whose context has already ended returns its
// error before it takes a connection: it opens no connection to Redis
// and writes nothing, and a lease it was given stays held. The pool dials
// without a context (DialPool), so a call that spoils its pooled
// connection costs a new one, and it has an idle connection to lend.
func testDeadContext(t *testing.T, f Factory, node *redistest.Node) {
	l := MustNew(t, f, DialPool(t, node), strategy.Config{TTL: 10 * time.Second})
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	warm := mustLock(t, l, "warm")
	if err := warm.Unlock(context.Background()); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	keys := dbSize(t, node) // what the warm-up left (a fencing counter)
	before := stat(t, node, "total_connections_received")
	wrong := 0 // calls that did not return ctx's error
	for i := range deadCalls {
		if _, err := l.TryLock(dead, "dead-"+strconv.Itoa(i)); !errors.Is(err, context.Canceled) {
			wrong++
		}
	}
	for range 10 {
		if _, err := l.Lock(dead, "dead-lock"); !errors.Is(err, context.Canceled) || !errors.Is(err, strategy.ErrNotAcquired) {
			wrong++
		}
	}
	if wrong != 0 {
		t.Errorf("calls with an ended context that did not return %v = %d of %d, want 0", context.Canceled, wrong, deadCalls+10)
	}
	// The INFO that measures opens one connection of its own.
	opened := stat(t, node, "total_connections_received") - before - 1
	t.Logf("%d TryLock and 10 Lock calls with an ended context opened %d connections", deadCalls, opened)
	if opened != 0 {
		t.Errorf("connections opened by calls with an ended context = %d, want 0", opened)
	}
	if n := dbSize(t, node) - keys; n != 0 {
		t.Errorf("keys written by calls with an ended context = %d, want 0", n)
	}

	lease := mustLock(t, l, "held")
	before = stat(t, node, "total_connections_received")
	wrong = 0
	for range deadCalls / 10 {
		if err := lease.Extend(dead, 0); !errors.Is(err, context.Canceled) {
			wrong++
		}
		if err := lease.Unlock(dead); !errors.Is(err, context.Canceled) {
			wrong++
		}
	}
	if wrong != 0 {
		t.Errorf("Extend and Unlock calls with an ended context that did not return %v = %d of %d, want 0", context.Canceled, wrong, deadCalls/5)
	}
	if opened := stat(t, node, "total_connections_received") - before - 1; opened != 0 {
		t.Errorf("connections opened by Extend and Unlock with an ended context = %d, want 0", opened)
	}
	if _, err := l.TryLock(context.Background(), "held"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() of the lease's key = %v, want %v (still held)", err, strategy.ErrNotAcquired)
	}
	if err := lease.Unlock(context.Background()); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

// dbSize returns DBSIZE.
func dbSize(t testing.TB, node *redistest.Node) int {
	t.Helper()
	n, err := redis.Int(node.Do("DBSIZE"))
	if err != nil {
		t.Fatalf("DBSIZE = %v, want nil", err)
	}
	return n
}

// testNilConnPool: a Pool whose GetContext returns (nil, nil) makes every
// call fail with an error, never panic, whether it serves the acquire or
// only the release.
func testNilConnPool(t *testing.T, f Factory, node *redistest.Node) {
	testBadPool(t, f, node, PoolNilConn, "a pool that returns no connection")
}

// testPanickingConns: a Pool whose connections panic in every method (a
// user's broken connection type) makes every call fail with an error,
// never panic, in the caller's goroutine or in the Locker's own (a
// background take-back or Abandon: a panic there would end the test
// binary).
func testPanickingConns(t *testing.T, f Factory, node *redistest.Node) {
	testBadPool(t, f, node, PoolPanics, "a pool whose connections panic")
}

// testBadPool: once pool does fault, TryLock, Lock, Extend and Unlock
// fail with an error, never panic; once it is healthy again (and the
// Locker's background calls ended, where it has Wait), the lease taken
// before still unlocks.
func testBadPool(t *testing.T, f Factory, node *redistest.Node, fault PoolFault, what string) {
	ctx := context.Background()
	pool := NewFaultyPool(node.Pool())
	l := MustNew(t, f, pool, strategy.Config{TTL: 10 * time.Second})
	lease := mustLock(t, l, "held")
	pool.Set(fault)
	calls := []struct {
		name string
		call func(ctx context.Context) error
		want []error // beside "not nil"
	}{
		{"TryLock", func(ctx context.Context) error { _, err := l.TryLock(ctx, "k"); return err }, nil},
		{"Lock", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			_, err := l.Lock(ctx, "k")
			return err
		}, []error{strategy.ErrNotAcquired, context.DeadlineExceeded}},
		{"Extend", func(ctx context.Context) error { return lease.Extend(ctx, 0) }, nil},
		{"Unlock", func(ctx context.Context) error { return lease.Unlock(ctx) }, nil},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := noPanic(t, c.name, func() error { return c.call(ctx) })
			if c.name == "Extend" && !extends(l.Properties()) {
				checkExtendUnsupported(t, "Extend() over "+what, err)
				return
			}
			if err == nil || errors.Is(err, strategy.ErrNotHeld) || (c.want == nil && errors.Is(err, strategy.ErrNotAcquired)) {
				t.Errorf("%s() over %s = %v, want a Redis failure", c.name, what, err)
			}
			for _, want := range c.want {
				if !errors.Is(err, want) {
					t.Errorf("%s() over %s = %v, want %v", c.name, what, err, want)
				}
			}
		})
	}
	pool.Set(PoolHealthy)
	// A Locker whose background calls retry (take-backs, owed releases)
	// may have one in flight as the pool heals; redlock's breaker then
	// skips the node for other calls until it settles. Wait for them.
	if w, ok := l.(interface{ Wait(context.Context) error }); ok {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := w.Wait(wctx)
		cancel()
		require.NoError(t, err, "Wait() for the Locker's background calls once the pool is healthy")
	}
	// An Unlock that a background call's probe made redlock's breaker
	// skip fails with a Redis failure, not ErrNotHeld: it is tried again
	// (a probe settles within NodeTimeout), as a careful user does.
	err := lease.Unlock(ctx)
	for end := time.Now().Add(5 * time.Second); err != nil && !errors.Is(err, strategy.ErrNotHeld) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		err = lease.Unlock(ctx)
	}
	if err != nil {
		t.Errorf("Unlock() once the pool is healthy = %v, want nil", err)
	}
}

// noPanic runs call and turns a panic into a test failure.
func noPanic(t *testing.T, name string, call func() error) (err error) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("%s() panicked: %v", name, v)
			err = fmt.Errorf("panicked: %v", v)
		}
	}()
	return call()
}

// testBareConns: connections that implement neither redis.ConnWithContext
// nor redis.ConnWithTimeout (a user's own connection type) serve every
// call with a cancellable context; connections with redis.ConnWithTimeout
// only also bound a call to a frozen node by its context's deadline.
func testBareConns(t *testing.T, f Factory, node *redistest.Node) {
	pools := []struct {
		name string
		pool strategy.Pool
	}{
		{"redis.Conn only", BarePool(node.Pool())},
		{"redis.ConnWithTimeout", TimeoutPool(node.Pool())},
	}
	for _, p := range pools {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			l := MustNew(t, f, p.pool, strategy.Config{TTL: 10 * time.Second})
			lease, err := l.TryLock(ctx, "k-"+p.name)
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			if _, err := l.TryLock(ctx, "k-"+p.name); !errors.Is(err, strategy.ErrNotAcquired) {
				t.Errorf("TryLock() of a held key = %v, want %v", err, strategy.ErrNotAcquired)
			}
			if err := lease.Extend(ctx, 5*time.Second); !extends(l.Properties()) {
				checkExtendUnsupported(t, "Extend()", err)
			} else if err != nil {
				t.Errorf("Extend() = %v, want nil", err)
			}
			if err := lease.Unlock(ctx); err != nil {
				t.Errorf("Unlock() = %v, want nil", err)
			}
			Contention(t, l, node.Pool(), "contended-"+p.name, 4, 25)
		})
	}
	t.Run("frozen node", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		l := MustNew(t, f, TimeoutPool(node.Pool()), strategy.Config{TTL: 10 * time.Second})
		lease := mustLock(t, l, "held")
		node.Pause()
		t.Cleanup(node.Resume)
		for name, call := range map[string]func(ctx context.Context) error{
			"TryLock": func(ctx context.Context) error { _, err := l.TryLock(ctx, "k"); return err },
			"Extend":  func(ctx context.Context) error { return lease.Extend(ctx, time.Second) },
		} {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			start := time.Now()
			err := call(ctx)
			late := time.Since(start) - timeout
			cancel()
			if name == "Extend" && !extends(l.Properties()) {
				checkExtendUnsupported(t, "Extend() on a frozen node", err)
				continue
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s() on a frozen node = %v, want %v", name, err, context.DeadlineExceeded)
			}
			assert.LessOrEqual(t, late, frozenSlack(timeout), "%s() on a frozen node: how late it returned after its deadline", name)
		}
	})
}

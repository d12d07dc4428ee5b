package strategy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	method2 "github.com/lockzoo/lockzoo/getset_timestamp/method2"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

func newLocker(t *testing.T, node *redistest.Node, ttl time.Duration) strategy.Locker {
	t.Helper()
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: ttl})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// TestRunKeepsTheLock: fn outlives several TTLs and holds the lock all
// along, which Run extends (the key's PTTL seen rising at least three
// times); afterwards the lock is released. The TTL of 1 s leaves each
// extension (every third of it) two thirds of a second to land, ample on a
// loaded machine.
func TestRunKeepsTheLock(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const ttl = time.Second
	const wantExtended = 3
	l := newLocker(t, node, ttl)
	other := newLocker(t, node, ttl)
	key := protocol.LockKey("lock:", "job")
	extended := 0
	err := strategy.Run(context.Background(), l, "job", func(ctx context.Context) error {
		start := time.Now()
		last := locktest.PTTL(t, node, key)
		for extended < wantExtended || time.Since(start) < 2*ttl {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if lease, err := other.TryLock(ctx, "job"); !errors.Is(err, strategy.ErrNotAcquired) {
				if lease != nil {
					lease.Unlock(ctx)
				}
				t.Errorf("TryLock() by another client during Run = %v, want %v", err, strategy.ErrNotAcquired)
				return nil
			}
			pttl := locktest.PTTL(t, node, key)
			if pttl > last {
				extended++
			}
			last = pttl
			time.Sleep(25 * time.Millisecond)
		}
		return nil
	})
	require.NoError(t, err, "Run()")
	assert.GreaterOrEqual(t, extended, wantExtended, "times the key's PTTL rose during Run")
	n, err := redis.Int(node.Do("EXISTS", key))
	require.NoError(t, err, "EXISTS lock:job after Run")
	assert.Equal(t, 0, n, "EXISTS lock:job after Run")
}

// TestRunCancelsWhenLockLost: the key is deleted from outside; fn's
// context is cancelled by the next extension (every third of the TTL),
// with a cause wrapping ErrNotHeld, and Run reports the loss.
func TestRunCancelsWhenLockLost(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	// The lease's deadline, a fallback that would cancel too, comes about
	// a TTL after the deletion; its cause says so ("the lease's deadline
	// passed"), which tells it from the extension's without a clock.
	const ttl = 3 * time.Second
	l := newLocker(t, node, ttl)
	var cause error
	var waited time.Duration
	err := strategy.Run(context.Background(), l, "job", func(ctx context.Context) error {
		if _, err := node.Do("DEL", protocol.LockKey("lock:", "job")); err != nil {
			t.Errorf("DEL = %v, want nil", err)
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			waited = time.Since(start)
			cause = context.Cause(ctx)
		case <-time.After(5 * time.Second):
			t.Errorf("fn's context was not cancelled within 5s of the key's deletion")
		}
		return nil
	})
	if !errors.Is(cause, strategy.ErrNotHeld) {
		t.Errorf("context.Cause() = %v, want %v", cause, strategy.ErrNotHeld)
	}
	if cause != nil {
		assert.NotContains(t, cause.Error(), "deadline passed", "context.Cause(): want the extension's finding, not the deadline's fallback")
	}
	assert.Less(t, waited, ttl, "cancelled that long after the deletion, want before the lease's deadline (TTL %v)", ttl)
	if !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Run() = %v, want %v", err, strategy.ErrNotHeld)
	} else {
		assert.Equal(t, 1, strings.Count(err.Error(), "lockzoo:"), "Run() = %q: want \"lockzoo:\" once", err)
	}
	t.Logf("fn cancelled %v after the key was deleted (period %v)", waited, ttl/3)
}

// TestRunReleasesAfterParentCancelled: the caller's context is cancelled
// while fn runs; Run still releases the lock and returns fn's error.
func TestRunReleasesAfterParentCancelled(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := newLocker(t, node, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	err := strategy.Run(ctx, l, "job", func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run() = %v, want %v", err, context.Canceled)
	}
	if n, err := redis.Int(node.Do("EXISTS", protocol.LockKey("lock:", "job"))); err != nil || n != 0 {
		t.Errorf("EXISTS lock:job after Run = %d, %v; want 0 (released despite the cancelled parent)", n, err)
	}
}

// TestRunNotAcquired: a held lock and a short context give the Lock error.
func TestRunNotAcquired(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := newLocker(t, node, 10*time.Second)
	lease, err := l.TryLock(context.Background(), "job")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	defer lease.Unlock(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ran := false
	err = strategy.Run(ctx, l, "job", func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, strategy.ErrNotAcquired) || ran {
		t.Errorf("Run() = %v (fn ran: %v), want %v and fn not run", err, ran, strategy.ErrNotAcquired)
	}
}

// TestRunRetriesTheRelease: the pool fails the first Unlock that Run makes
// after fn returns; that failure spends nothing, so Run unlocks again and
// the lock is released.
func TestRunRetriesTheRelease(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	l, err := luarelease.New(pool, strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	err = strategy.Run(context.Background(), l, "job", func(context.Context) error {
		pool.FailNext(1) // the release's first connection
		return nil
	})
	if err != nil {
		t.Errorf("Run() = %v, want nil (the release retried)", err)
	}
	if n, err := redis.Int(node.Do("EXISTS", "lock:job")); err != nil || n != 0 {
		t.Errorf("EXISTS lock:job after Run = %d, %v; want 0 (released)", n, err)
	}
}

// TestRunDeadlinePassed: on a technique that cannot extend (method 2),
// the lease's Deadline arrives unextended; fn's context is cancelled with
// a cause wrapping ErrNotHeld, and Run's error names the technique once,
// as every error a caller gets does.
func TestRunDeadlinePassed(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	const ttl = time.Second
	l, err := method2.New(node.Pool(), strategy.Config{TTL: ttl})
	require.NoError(t, err, "method2.New()")
	locktest.CloseOnCleanup(t, l)
	var cause error
	err = strategy.Run(context.Background(), l, "job", func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			cause = context.Cause(ctx)
		case <-time.After(10 * ttl):
			t.Errorf("fn's context was not cancelled within %v of a lease of TTL %v", 10*ttl, ttl)
		}
		return nil
	})
	assert.ErrorIs(t, cause, strategy.ErrNotHeld, "context.Cause()")
	require.ErrorIs(t, err, strategy.ErrNotHeld, "Run()")
	msg := err.Error()
	assert.Equal(t, 1, strings.Count(msg, "lockzoo:"), "%q: want \"lockzoo:\" once", msg)
	assert.True(t, strings.HasPrefix(msg, "lockzoo: getset_timestamp/method2: run \"job\": "), "%q: want it to start with the technique and the call", msg)
}

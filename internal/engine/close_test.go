package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestClose: Close ends every Lock that waits, at the head of the key's
// line (between attempts) or behind it (before its first), with
// ErrNotAcquired and ErrClosed; afterwards TryLock, Lock and Extend return
// ErrClosed without reaching the technique, Unlock still releases, and a
// second Close returns nil.
func TestClose(t *testing.T) {
	ctx := context.Background()
	tech := &scripted{acquire: func(n int) (engine.Acquired, error) {
		if n == 1 {
			return engine.Acquired{}, nil // the lease below
		}
		return held(n)
	}}
	l := newLocker(t, tech, strategy.Config{Retry: strategy.Fixed(time.Hour)})
	lease, err := l.TryLock(ctx, "held")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const waiters = 2
	errs := make(chan error, waiters)
	for range waiters {
		go func() {
			_, err := l.Lock(waitCtx, "k")
			errs <- err
		}()
	}
	// The head's first attempt was refused, and the other waits its turn.
	for deadline := time.Now().Add(10 * time.Second); tech.attempts.Load() < 2 || engine.LineLen(l, "lock:k") < waiters; {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %d attempts, %d in line; want 2 and %d", tech.attempts.Load(), engine.LineLen(l, "lock:k"), waiters)
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	for range waiters {
		select {
		case err := <-errs:
			if !errors.Is(err, strategy.ErrClosed) || !errors.Is(err, strategy.ErrNotAcquired) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("waiting Lock() after Close = %v, want %v and %v, not the deadline", err, strategy.ErrClosed, strategy.ErrNotAcquired)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("waiting Lock() has not returned 10s after Close")
		}
	}

	attempts := tech.attempts.Load()
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("TryLock() after Close = %v, want %v", err, strategy.ErrClosed)
	}
	if _, err := l.Lock(ctx, "k"); !errors.Is(err, strategy.ErrClosed) || errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("Lock() after Close = %v, want %v and not %v (it made no attempt)", err, strategy.ErrClosed, strategy.ErrNotAcquired)
	}
	if got := tech.attempts.Load(); got != attempts {
		t.Errorf("acquire attempts after Close = %d, want none", got-attempts)
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("Extend() after Close = %v, want %v", err, strategy.ErrClosed)
	}
	if got := tech.extended.Load(); got != 0 {
		t.Errorf("Extend calls that reached the technique after Close = %d, want 0", got)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() after Close = %v, want nil", err)
	}
	if got := tech.released.Load(); got != 1 {
		t.Errorf("releases after Unlock after Close = %d, want 1", got)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
}

// flaky is a Technique that works until down is set, and then fails every
// call with errDown.
type flaky struct{ down atomic.Bool }

func (f *flaky) fail() error {
	if f.down.Load() {
		return errDown
	}
	return nil
}

func (f *flaky) Acquire(context.Context, engine.Attempt) (engine.Acquired, error) {
	return engine.Acquired{}, f.fail()
}
func (f *flaky) Release(context.Context, engine.Held) error { return f.fail() }
func (f *flaky) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, f.fail()
}

// TestErrorPrefixOnce: the engine names the technique and the call once,
// "lockzoo: <name>: <op> <key>: <technique's error>", in TryLock, Lock,
// Extend and Unlock.
func TestErrorPrefixOnce(t *testing.T) {
	ctx := context.Background()
	tech := &flaky{}
	l := newLocker(t, tech, strategy.Config{Retry: strategy.NoRetry()})
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	tech.down.Store(true)
	calls := []struct {
		op   string
		call func() error
		want string
	}{
		{"TryLock", func() error { _, err := l.TryLock(ctx, "k"); return err }, `lockzoo: test: trylock "k": ` + errDown.Error()},
		{"Lock", func() error { _, err := l.Lock(ctx, "k"); return err }, `lockzoo: test: lock "k": `},
		{"Extend", func() error { return lease.Extend(ctx, time.Second) }, `lockzoo: test: extend "k": ` + errDown.Error()},
		{"Unlock", func() error { return lease.Unlock(ctx) }, `lockzoo: test: unlock "k": ` + errDown.Error()},
	}
	for _, c := range calls {
		t.Run(c.op, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, errDown) {
				t.Fatalf("%s() = %v, want %v", c.op, err, errDown)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.want) {
				t.Errorf("%s() = %q, want it to start %q", c.op, msg, c.want)
			}
			if n := strings.Count(msg, "lockzoo: test:"); n != 1 {
				t.Errorf("%s() = %q names the technique %d times, want once", c.op, msg, n)
			}
		})
	}
}

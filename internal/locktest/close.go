package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// closeBound bounds how long a Lock blocked in a wait may take to return
// once Close was called: far below its own 30 s context, so a Lock that
// returns only when its context ends fails the check.
const closeBound = 5 * time.Second

// testClose: Close ends a Lock blocked in a wait (ErrClosed and
// ErrNotAcquired), leaves no goroutine behind, and returns nil, twice; after
// it TryLock, Lock and Extend return ErrClosed without sending a command to
// Redis, and Unlock still releases the lock.
func testClose(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	running := goleak.IgnoreCurrent() // the harness's own goroutines
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	c, ok := l.(Closer)
	if !ok {
		t.Fatalf("%T has no Close() error method", l)
	}
	held := mustLock(t, l, "k")
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	waited, started := make(chan error, 1), make(chan struct{})
	go func() { // ends when Lock returns: at Close, or when waitCtx ends
		close(started)
		_, err := l.Lock(waitCtx, "k")
		waited <- err
	}()
	<-started
	// Let it reach its wait; one still in its attempt gives up with
	// ErrClosed too, once the attempt is refused.
	time.Sleep(100 * time.Millisecond)

	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, strategy.ErrClosed) || !errors.Is(err, strategy.ErrNotAcquired) {
			t.Errorf("Lock() waiting when Close came = %v, want %v and %v", err, strategy.ErrClosed, strategy.ErrNotAcquired)
		}
	case <-time.After(closeBound):
		t.Fatalf("Lock() waiting when Close came has not returned within %v", closeBound)
	}
	if err := goleak.Find(running); err != nil {
		t.Errorf("goroutines left right after Close: %v", err)
	}

	before := stat(t, node, "total_commands_processed")
	if _, err := l.TryLock(ctx, "other"); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("TryLock() after Close = %v, want %v", err, strategy.ErrClosed)
	}
	if _, err := l.Lock(ctx, "other"); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("Lock() after Close = %v, want %v", err, strategy.ErrClosed)
	}
	if err := held.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("Extend() after Close = %v, want %v", err, strategy.ErrClosed)
	}
	// The INFO call that reads the counter is counted once.
	if got := stat(t, node, "total_commands_processed") - before; got != 1 {
		t.Errorf("commands Redis processed for TryLock, Lock and Extend after Close = %d, want 0", got-1)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Errorf("Unlock() after Close = %v, want nil (the lock is released)", err)
	}
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("TryLock() after Unlock after Close = %v, want %v", err, strategy.ErrClosed)
	}
	other := MustNew(t, f, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	lease, err := other.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by another Locker after Unlock after Close = %v, want nil (the lock was released)", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() by another Locker = %v, want nil", err)
	}
}

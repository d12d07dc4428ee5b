package luarelease_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestLineServesRemoteWaiterFirst: B, in another Locker, waits in the
// key's line; A releases and at once locks again. B gets the lock first.
func TestLineServesRemoteWaiterFirst(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	la := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	lb := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	a, err := la.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("A Lock() = %v, want nil", err)
	}
	order := make(chan string, 2)
	bDone := make(chan error, 1)
	go func() {
		lease, err := lb.Lock(ctx, "k")
		if err == nil {
			order <- "B"
			err = lease.Unlock(ctx)
		}
		bDone <- err
	}()
	waitInLine(t, node, lineK, 1)
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("A Unlock() = %v, want nil", err)
	}
	again, err := la.Lock(ctx, "k") // A locks again at once
	if err != nil {
		t.Fatalf("A Lock() again = %v, want nil", err)
	}
	order <- "A"
	if err := again.Unlock(ctx); err != nil {
		t.Errorf("A Unlock() = %v, want nil", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("B Lock() = %v, want nil", err)
	}
	if first := <-order; first != "B" {
		t.Errorf("first holder after A's release = %s, want B (who was waiting in line)", first)
	}
}

// TestAbandonLeavesTheLine: a waiter whose context ends leaves the line at
// once, so the next client does not wait for it to go stale.
func TestAbandonLeavesTheLine(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	l := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	holder, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := newLocker(t, node.Pool(), strategy.Config{}).Lock(short, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("Lock() = %v, want %v", err, strategy.ErrNotAcquired)
	}
	if n, err := redis.Int(node.Do("ZCARD", lineK)); err != nil || n != 0 {
		t.Errorf("ZCARD line after the waiter gave up = %d, %v; want 0", n, err)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if _, err := l.TryLock(ctx, "k"); err != nil {
		t.Errorf("TryLock() after the line emptied = %v, want nil", err)
	}
}

// TestLostRefusalLeavesTheLine: a Lock whose only attempt ran, and so
// joined the line, but lost its reply before its context ended leaves
// the line as a refused waiter does: left there, it would hold the free
// lock back from the others for up to LineStale.
func TestLostRefusalLeavesTheLine(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	proxy := redistest.NewProxy(t, node.Addr())
	ctx := context.Background()
	// The holder's TryLock also caches the acquire script on the node, so
	// that the reply dropped below is the waiter's attempt, not a NOSCRIPT.
	holder, err := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute}).TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	proxy.DropNextReplies(1)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond) // within the attempt's own bound (250 ms)
	defer cancel()
	waiter := newLocker(t, proxy.Pool(), strategy.Config{TTL: time.Minute})
	if _, err := waiter.Lock(short, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("Lock() = %v, want %v", err, strategy.ErrNotAcquired)
	}
	// The Abandon runs in the background (the node may be frozen); Close
	// waits for it.
	if err := waiter.(io.Closer).Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if n, err := redis.Int(node.Do("ZCARD", lineK)); err != nil || n != 0 {
		t.Errorf("ZCARD line after the waiter whose reply was lost gave up = %d, %v; want 0", n, err)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
}

// TestPanickingConnectionsLeaveNoPanic: a Lock over a pool whose
// connections panic fails every attempt with an outcome it cannot know,
// so it leaves the line in the background as it gives up; that Abandon
// meets the panicking connections too, and must not crash the process
// from its goroutine (Close waits for it).
func TestPanickingConnectionsLeaveNoPanic(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	pool.Set(locktest.PoolPanics)
	l := newLocker(t, pool, strategy.Config{TTL: time.Minute})
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(short, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("Lock() over panicking connections = %v, want %v", err, strategy.ErrNotAcquired)
	}
	if err := l.(io.Closer).Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
}

// waitInLine waits until the line holds n waiters.
func waitInLine(t *testing.T, node *redistest.Node, line string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got, err := redis.Int(node.Do("ZCARD", line)); err == nil && got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never held %d waiters", line, n)
}

package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// warm runs one TryLock and Unlock on l, so that scripts are cached and
// connections open before a fault is injected.
func warm(t *testing.T, l strategy.Locker) {
	t.Helper()
	ctx := context.Background()
	lease, err := l.TryLock(ctx, "warm")
	if err != nil {
		t.Fatalf("warm-up TryLock() = %v, want nil", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("warm-up Unlock() = %v, want nil", err)
	}
}

// testLostAcquireReply: the acquire reaches Redis but its reply is lost,
// so TryLock fails at its deadline. The lock must not stay held by
// nobody: the Locker takes its attempt back, and another client gets the
// key within a second or so, long before the 10 s TTL (the test allows
// half of it, room for a loaded machine, where only the expiry would free
// the key without the take-back).
func testLostAcquireReply(t *testing.T, f Factory, node *redistest.Node) {
	const ttl = 10 * time.Second
	proxy := redistest.NewProxy(t, node.Addr())
	l := MustNew(t, f, proxy.Pool(), strategy.Config{TTL: ttl})
	if !takesBack(l.Properties()) {
		t.Skipf("technique cannot take back an attempt (its release checks no owner); %s shows what a lost reply does instead", lostReplyTest(l.Properties()))
	}
	other := MustNew(t, f, node.Pool(), strategy.Config{TTL: ttl})
	warm(t, l)
	proxy.DropNextReplies(1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if lease, err := l.TryLock(ctx, "k"); err == nil {
		_ = lease.Unlock(context.Background())
		t.Fatalf("TryLock() whose reply was dropped = nil, want an error")
	}
	failed := time.Now()
	for {
		lease, err := other.TryLock(context.Background(), "k")
		if err == nil {
			t.Logf("the key was free again %v after the failed TryLock", time.Since(failed).Round(time.Millisecond))
			_ = lease.Unlock(context.Background())
			return
		}
		if !errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("other TryLock() = %v, want nil or %v", err, strategy.ErrNotAcquired)
		}
		if time.Since(failed) > ttl/2 {
			t.Fatalf("the key is still held %v after a TryLock whose reply was lost (TTL %v): held by nobody", ttl/2, ttl)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testReplyBlip: a Lock(5s) whose first replies are lost, on a network
// that heals 150 ms later, gets the lock: each attempt is bounded on its
// own (engine.AttemptTimeout, 250 ms at this TTL, or the technique's own
// bound: redlock's NodeTimeout), the timed-out connection is dropped, and
// the lost attempt is taken back. Without either, the attempt waits for
// ctx, or the lock stays held by the lost attempt for its 10 s TTL.
func testReplyBlip(t *testing.T, f Factory, node *redistest.Node) {
	proxy := redistest.NewProxy(t, node.Addr())
	l := MustNew(t, f, proxy.Pool(), strategy.Config{TTL: 10 * time.Second})
	if !takesBack(l.Properties()) {
		t.Skipf("technique cannot take back an attempt (its release checks no owner); %s shows what a lost reply does instead", lostReplyTest(l.Properties()))
	}
	warm(t, l)
	proxy.DropReplies()
	healed := make(chan struct{})
	go func() { // ends after 150 ms
		defer close(healed)
		time.Sleep(150 * time.Millisecond)
		proxy.Heal()
	}()
	defer func() { <-healed }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	lease, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("Lock(5 s) across a 150 ms loss of replies = %v, want nil", err)
	}
	t.Logf("locked %v after the replies began to be lost (healed after 150 ms)", time.Since(start).Round(time.Millisecond))
	if err := lease.Unlock(context.Background()); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

package luarelease_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestHandOffToDepartedWaiterIsPassedOn: a waiter gives up while its
// Locker cannot reach Redis, so its Abandon fails and it stays in the
// line; the holder's release then hands it the lock (its Locker still
// listens on its inbox). The Locker, in which nobody waits by that name
// any more, passes the lock on at once, instead of leaving it held by
// nobody until the departed waiter's TTL (a minute here).
func TestHandOffToDepartedWaiterIsPassedOn(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	notices := subscribeKey(t, node)
	holder, err := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute}).TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	pool := locktest.NewFaultyPool(node.Pool())
	waiter := newLocker(t, pool, strategy.Config{TTL: time.Minute, Retry: noPolling})
	wctx, give := context.WithCancel(ctx)
	defer give()
	done := lockLease(wctx, waiter, "k")
	waitInLine(t, node, lineK, 1)
	waitSubscribed(t, node, inboxK)

	pool.Set(locktest.PoolFails) // its Abandon cannot reach Redis
	give()
	if r := <-done; !errors.Is(r.err, strategy.ErrNotAcquired) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("waiter Lock() = %v, want %v and %v", r.err, strategy.ErrNotAcquired, context.Canceled)
	}
	if n, err := redis.Int(node.Do("ZCARD", lineK)); err != nil || n != 1 {
		t.Fatalf("ZCARD line after the failed Abandon = %d, %v; want 1: the departed waiter is still in line", n, err)
	}
	// The waiter's Locker retries the Abandon until it reaches Redis: its
	// pool heals only after the release, so that the release still finds
	// the departed waiter in line (the case under test).
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("holder Unlock() = %v, want nil", err)
	}
	var handedOff bool
	for _, m := range notices.published(t, node) {
		handedOff = handedOff || strings.Contains(m, " handoff:")
	}
	if !handedOff {
		t.Fatalf("the release published no hand-off notice; want one to the departed waiter (the case under test)")
	}
	pool.Set(locktest.PoolHealthy)
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := redis.String(node.Do("GET", lockK))
		if errors.Is(err, redis.ErrNil) {
			break // passed on: nobody else waits, so it is free
		}
		if time.Now().After(deadline) {
			pttl, _ := redis.Int(node.Do("PTTL", lockK))
			t.Fatalf("lock still holds %q (%v) 5s after it was handed to the departed waiter, %d ms left; want it passed on", v, err, pttl)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := newLocker(t, node.Pool(), strategy.Config{}).TryLock(ctx, "k"); err != nil {
		t.Errorf("TryLock() after the pass-on = %v, want nil", err)
	}
}

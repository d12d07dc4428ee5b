package luarelease_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestHandOffWithoutRefusalHasDeadline: a waiter whose only attempt ran in
// Redis (it joined the line) but lost its reply was never refused; a
// release then hands it the lock. Its lease's Deadline must count from
// that attempt's send time, within [the Lock call's start, its return +
// TTL], not from the zero time (issue 28: 0001-01-01 00:00:10).
//
// The waiter's Locker reaches Redis through a proxy. A first Lock call
// (w1) waits in line and gives up, so the Locker's subscription to its
// inbox for the key lingers, confirmed (notify.Linger); the second (w2)
// then finds it confirmed and sleeps on its Retry policy (an hour) after
// its attempt, whose reply the proxy drops, so it makes no other attempt
// before the holder's release hands it the lock.
func TestHandOffWithoutRefusalHasDeadline(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = 10 * time.Second
	holder, err := newLocker(t, node.Pool(), strategy.Config{TTL: ttl}).TryLock(ctx, "k")
	require.NoError(t, err, "holder TryLock()")
	proxy := redistest.NewProxy(t, node.Addr())
	waiter := newLocker(t, proxy.Pool(), strategy.Config{TTL: ttl, Retry: noPolling})

	w1ctx, give := context.WithCancel(ctx)
	w1 := lockLease(w1ctx, waiter, "k")
	waitInLine(t, node, lineK, 1)
	waitSubscribed(t, node, inboxK)
	give()
	r := <-w1
	require.ErrorIs(t, r.err, strategy.ErrNotAcquired, "w1 Lock() after giving up")
	require.Eventually(t, func() bool {
		n, err := redis.Int(node.Do("ZCARD", lineK))
		return err == nil && n == 0
	}, 5*time.Second, 5*time.Millisecond, "w1's Abandon never left the line")

	proxy.DropReplyTo("EVALSHA") // w2's attempt runs, and joins the line, but its reply is lost (not w1's Abandon's, maybe still on its way)
	start := time.Now()
	w2 := lockLease(ctx, waiter, "k")
	waitInLine(t, node, lineK, 1)
	require.NoError(t, holder.Unlock(ctx), "holder Unlock()")
	r = waitResult(t, w2, 5*time.Second)
	returned := time.Now()
	require.NoError(t, r.err, "w2 Lock()")
	t.Cleanup(func() { _ = r.lease.Unlock(context.Background()) })
	require.NotContains(t, r.lease.Token(), ".", "w2's lease token %q: want its waiter name, which a hand-off sets (the case under test)", r.lease.Token())

	locktest.CheckDeadline(t, r.lease, start, returned, ttl)
	assert.True(t, strings.HasPrefix(proxy.Mode(), "pass"), "proxy mode = %q, want pass: the dropped reply was w2's attempt's", proxy.Mode())
}

// waitResult returns what done yields within bound, or fails the test.
func waitResult(t *testing.T, done <-chan lockResult, bound time.Duration) lockResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(bound):
		require.FailNow(t, "Lock did not return", "within %v", bound)
	}
	return lockResult{}
}

// TestHandOffAfterLongWaitIsNotExpired: a waiter that waited in line
// longer than its TTL, refused every LineListened/2 meanwhile, is handed
// the lock by a release in Redis. Its lease counts from its last refused
// attempt, which the hand-off's fencing token (above the counter that
// refusal reported) shows came before the hand-off: the lease is still
// valid when Lock returns, not expired since before the hand-off, as one
// counted from the waiter's first attempt would be.
func TestHandOffAfterLongWaitIsNotExpired(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = 2 * time.Second
	holder, err := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute}).TryLock(ctx, "k")
	require.NoError(t, err, "holder TryLock()")
	waiter := newLocker(t, node.Pool(), strategy.Config{TTL: ttl, Retry: noPolling})
	start := time.Now()
	done := lockLease(ctx, waiter, "k")
	waitInLine(t, node, lineK, 1)
	waitSubscribed(t, node, inboxK)
	time.Sleep(ttl + time.Second) // the wait under test: longer than the waiter's TTL
	require.NoError(t, holder.Unlock(ctx), "holder Unlock()")
	r := waitResult(t, done, 5*time.Second)
	returned := time.Now()
	require.NoError(t, r.err, "waiter Lock()")
	t.Cleanup(func() { _ = r.lease.Unlock(context.Background()) })
	locktest.CheckDeadline(t, r.lease, start, returned, ttl)
	assert.True(t, r.lease.Deadline().After(returned), "waiter Deadline() = %v, not after Lock returned at %v (%v after it began): the lease expired before it was handed over",
		r.lease.Deadline(), returned, returned.Sub(start))
}

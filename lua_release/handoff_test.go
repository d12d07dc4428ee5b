package luarelease_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// noPolling is a retry policy that would make a waiter sleep an hour
// between attempts: a waiter that gets the lock sooner was woken by a
// release notice or by the holder's reported TTL.
var noPolling = strategy.Fixed(time.Hour)

// newLocker builds a Locker over pool, closed in t.Cleanup, or fails the
// test.
func newLocker(t *testing.T, pool strategy.Pool, cfg strategy.Config) strategy.Locker {
	t.Helper()
	l, err := luarelease.New(pool, cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// holding starts a node and a Locker over it that never polls, and has
// that Locker take "k": the opening of the tests in which a holder's
// Unlock meets waiters. ctx bounds the test's calls to 20 s.
func holding(t *testing.T) (ctx context.Context, node *redistest.Node, l strategy.Locker, lease strategy.Lease) {
	t.Helper()
	locktest.NoLeaks(t)
	node = redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	l = newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	lease, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("Lock() = %v, want nil", err)
	}
	return ctx, node, l, lease
}

// lockAsync runs Lock in a goroutine; the returned channel yields its
// result. The goroutine ends when Lock returns (bounded by ctx).
func lockAsync(ctx context.Context, l strategy.Locker, key string) <-chan error {
	done := make(chan error, 1)
	go func() {
		lease, err := l.Lock(ctx, key)
		if err == nil {
			err = lease.Unlock(context.Background())
		}
		done <- err
	}()
	return done
}

// waitLocked fails the test unless done yields nil within bound.
func waitLocked(t *testing.T, done <-chan error, bound time.Duration, why string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waiter Lock() = %v, want nil (%s)", err, why)
		}
	case <-time.After(bound):
		t.Fatalf("waiter did not get the lock within %v (%s)", bound, why)
	}
	return time.Since(start)
}

// TestReleaseNoticeWakesRemoteWaiter: a waiter in another Locker (another
// process, in effect) that never polls gets the lock as soon as the holder
// releases it, through the pub/sub notice.
func TestReleaseNoticeWakesRemoteWaiter(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	waiter := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	lease, err := holder.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("Lock() = %v, want nil", err)
	}
	done := lockAsync(ctx, waiter, "k")
	waitSubscribed(t, node, inboxK)
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	d := waitLocked(t, done, 5*time.Second, "woken by the release notice")
	t.Logf("hand-off through pub/sub: %v", d)
}

// TestLostNoticeFallsBackToTimer: the subscription connection is killed
// while a waiter waits and the Hub reconnects; then the release's notice to
// the waiter is lost in transit. The waiter still gets the lock, through its
// timer: no notice reaches it, and no poke either (the Hub's only poke, for
// the killed connection, came before it resubscribed, and the waiter's
// attempt on it was refused). After the Hub reconnects, notices wake
// waiters again.
func TestLostNoticeFallsBackToTimer(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	// The waiter's connections, its subscription's too, go through a proxy
	// that can lose one reply: the notice.
	proxy := redistest.NewProxy(t, node.Addr())
	waiter := newLocker(t, proxy.Pool(), strategy.Config{TTL: time.Minute, Retry: strategy.Fixed(300 * time.Millisecond)})

	lease, err := holder.Lock(ctx, "k")
	require.NoError(t, err, "holder Lock()")
	done := lockAsync(ctx, waiter, "k")
	waitSubscribed(t, node, inboxK)
	seen := lastSeen(t, node)
	_, err = node.Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err, "CLIENT KILL TYPE pubsub")
	waitSubscribed(t, node, inboxK) // the Hub reconnected: its poke came before
	waitSeenAfter(t, node, seen)    // and the waiter's attempt on it was refused

	proxy.DropNextReplies(1)
	require.NoError(t, lease.Unlock(ctx), "holder Unlock()")
	require.Eventually(t, func() bool { return proxy.Mode() == "pass" }, 10*time.Second, time.Millisecond,
		"the release's notice never reached the waiter's proxy to be dropped: proxy mode %q", proxy.Mode())
	waitLocked(t, done, 10*time.Second, "its timer, after the notice was lost")

	// The Hub reconnected: a waiter that never polls is woken again.
	slow := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	lease, err = holder.Lock(ctx, "k")
	require.NoError(t, err, "holder Lock()")
	done = lockAsync(ctx, slow, "k")
	waitSubscribed(t, node, inboxK)
	_, err = node.Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err, "CLIENT KILL TYPE pubsub")
	waitSubscribed(t, node, inboxK) // resubscribed after reconnecting
	require.NoError(t, lease.Unlock(ctx), "holder Unlock()")
	waitLocked(t, done, 5*time.Second, "notice after reconnect")
}

// TestWaiterNeverSleepsPastExpiry: the holder dies; a waiter whose policy
// would sleep an hour gets the lock once the holder's reported TTL runs
// out.
func TestWaiterNeverSleepsPastExpiry(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := newLocker(t, node.Pool(), strategy.Config{TTL: 300 * time.Millisecond})
	if _, err := holder.TryLock(ctx, "k"); err != nil { // dies holding it
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	waiter := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	d := waitLocked(t, lockAsync(ctx, waiter, "k"), 5*time.Second, "the holder's TTL ran out")
	t.Logf("got the lock %v after the holder died (TTL 300ms)", d)
}

// TestLocalWaitersAreServedInOrder: a goroutine that releases and locks
// again at once joins the back of the line: the goroutine already waiting
// gets the lock first.
func TestLocalWaitersAreServedInOrder(t *testing.T) {
	ctx, node, l, a := holding(t)
	order := make(chan string, 2)
	bHolds := make(chan strategy.Lease, 1)
	go func() {
		lease, err := l.Lock(ctx, "k")
		if err != nil {
			order <- "B failed: " + err.Error()
			bHolds <- nil
			return
		}
		order <- "B"
		bHolds <- lease
	}()
	waitSubscribed(t, node, inboxK) // B is waiting
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	aDone := make(chan error, 1)
	go func() { // A locks again at once
		lease, err := l.Lock(ctx, "k")
		if err == nil {
			order <- "A"
			err = lease.Unlock(ctx)
		}
		aDone <- err
	}()
	if first := <-order; first != "B" {
		t.Fatalf("first to get the lock after A's release = %s, want B", first)
	}
	if b := <-bHolds; b != nil {
		if err := b.Unlock(ctx); err != nil {
			t.Errorf("B Unlock() = %v, want nil", err)
		}
	}
	if err := <-aDone; err != nil {
		t.Errorf("A's second Lock() = %v, want nil", err)
	}
}

// TestFencesIncrease: 1,000 successive holders of a key get strictly
// increasing fencing tokens, also across Locker instances.
func TestFencesIncrease(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	lockers := []strategy.Locker{
		newLocker(t, node.Pool(), strategy.Config{}),
		newLocker(t, node.Pool(), strategy.Config{}),
	}
	var last uint64
	for i := range 1000 {
		lease, err := lockers[i%2].Lock(ctx, "fenced")
		if err != nil {
			t.Fatalf("Lock() #%d = %v, want nil", i, err)
		}
		if f := lease.Fence(); f <= last {
			t.Fatalf("Fence() #%d = %d, want > %d", i, f, last)
		}
		last = lease.Fence()
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() #%d = %v, want nil", i, err)
		}
	}
	if got, err := redis.Uint64(node.Do("GET", luarelease.FenceKey(protocol.LockKey("lock:", "fenced")))); err != nil || got != last {
		t.Errorf("fence counter = %d, %v; want %d", got, err, last)
	}
}

// waitSubscribed waits until the node reports a subscriber on a channel
// that starts with prefix: lua_release's waiters listen on their Locker's
// inbox for the key, the key's release channel + "/" + the Locker's name.
func waitSubscribed(t *testing.T, node *redistest.Node, prefix string) {
	t.Helper()
	redistest.WaitSubscribed(t, prefix+"*", node)
}

// lastSeen returns the score of the head of "k"'s line in its seen set:
// when its waiter's last attempt reached Redis (server time, ms).
func lastSeen(t *testing.T, node *redistest.Node) int64 {
	t.Helper()
	v, err := redis.Strings(node.Do("ZRANGE", seenK, 0, 0, "WITHSCORES"))
	require.NoError(t, err, "ZRANGE %s", seenK)
	require.Len(t, v, 2, "ZRANGE %s WITHSCORES: want the waiter and its score", seenK)
	score, err := strconv.ParseInt(v[1], 10, 64)
	require.NoError(t, err, "score of %s", v[0])
	return score
}

// waitSeenAfter waits, up to 10 s, until the waiter heading "k"'s line has
// made an attempt since its last attempt was seen at before.
func waitSeenAfter(t *testing.T, node *redistest.Node, before int64) {
	t.Helper()
	require.Eventually(t, func() bool { return lastSeen(t, node) > before }, 10*time.Second, time.Millisecond,
		"the waiter made no attempt after the one seen at %d", before)
}

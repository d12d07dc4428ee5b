package luarelease_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestConcurrentCallsShareAConnection: the scripts of a Locker's
// concurrent Lock and Unlock calls travel on a shared connection
// (redisconn.Pipeline), so the Locker takes far fewer connections from its
// pool than it runs scripts, and every call still gets its own reply:
// every Lock holds its own key with a fencing token above the last one
// its goroutine saw, and every Unlock releases it. locktest.BusyBound
// ends a test that hangs.
func TestConcurrentCallsShareAConnection(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	l := newLocker(t, pool, strategy.Config{TTL: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), locktest.BusyBound)
	defer cancel()
	const workers, pairs = 16, 100
	locktest.EachWorker(t, workers, "shared:", locktest.RisingPairs(ctx, l, pairs))
	scripts := int64(2 * workers * pairs)
	if gets := pool.Gets(); gets >= scripts/2 {
		t.Errorf("connections taken from the pool = %d for %d scripts, want fewer than %d (shared)", gets, scripts, scripts/2)
	}
	locktest.AssertReleased(t, node, "*shared:*", 10*time.Second)
}

// TestSharedConnectionKilled: the connections of a Locker whose
// goroutines lock and unlock concurrently are killed three times (CLIENT
// KILL) while scripts await their replies on them. Every goroutine goes
// on: a Lock retries, an Unlock that failed is retried until it releases
// or finds the lock no longer its own, and no lock is left held by nobody
// until its TTL: a Lock attempt whose reply was lost is taken back, and a
// take-back that meets a dead connection (the pool lends the ones the
// kill closed) tries again, so no Lock waits for its own lost attempt's
// lock (its TTL is locktest.BusyTTL, twice the test's bound
// locktest.BusyBound, which is many times what the test takes on a
// loaded machine). Once the Locker is closed no lock is left.
func TestSharedConnectionKilled(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l, err := luarelease.New(node.Pool(), strategy.Config{TTL: locktest.BusyTTL})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), locktest.BusyBound)
	defer cancel()
	locktest.KillWhileBusy(ctx, t, l, []*redistest.Node{node}, 16, 150, "killed:")
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v, want nil", err)
	}
	locktest.AssertReleased(t, node, "*killed:*", locktest.BusyTTL)
}

// TestSwallowedReplyMakesNoWrongLease: goroutines of one Locker TryLock
// and Unlock three keys through a proxy that swallows a reply now and
// then while the connection stays open (redistest.Proxy.DropNextReplies),
// so that the scripts' replies on the shared connection would shift by
// one. No TryLock takes another script's reply for its own: no key ever
// has two holders at once, and each key's fences rise strictly. The
// scripts spoiled by a lost reply fail (outcome unknown), and their
// Locker takes back what they may have taken; Close then leaves no lock.
func TestSwallowedReplyMakesNoWrongLease(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	proxy := redistest.NewProxy(t, node.Addr())
	l, err := luarelease.New(proxy.Pool(), strategy.Config{TTL: 10 * time.Second})
	require.NoError(t, err, "New()")
	keys := []string{"swallowed:a", "swallowed:b", "swallowed:c"}
	const perKey, drops = 4, 5
	var (
		holders  [3]atomic.Int32 // goroutines that hold each key now
		calls    atomic.Int64    // TryLock calls returned, whatever they got
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		fences   [3]uint64 // the last fence each key's holders got
		problems []string
		leases   int
	)
	for k := range keys {
		for range perKey {
			wg.Go(func() {
				for !stop.Load() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					lease, err := l.TryLock(ctx, keys[k])
					calls.Add(1)
					if err != nil {
						cancel()
						continue
					}
					held := holders[k].Add(1)
					mu.Lock()
					leases++
					if held != 1 {
						problems = append(problems, fmt.Sprintf("%s: %d holders at once", keys[k], held))
					}
					if f := lease.Fence(); f <= fences[k] {
						problems = append(problems, fmt.Sprintf("%s: fence %d after %d", keys[k], f, fences[k]))
					} else {
						fences[k] = f
					}
					mu.Unlock()
					holders[k].Add(-1)
					_ = lease.Unlock(ctx) // a lost reply may fail it; the TTL ends it then
					cancel()
				}
			})
		}
	}
	for range drops {
		proxy.DropNextReplies(1)
		require.Eventually(t, func() bool { return proxy.Mode() == "pass" }, 20*time.Second, time.Millisecond, "waiting for the proxy to swallow a reply")
		after := calls.Load() + 200
		require.Eventually(t, func() bool { return calls.Load() >= after }, 20*time.Second, time.Millisecond, "waiting for 200 TryLock calls after the swallowed reply")
	}
	stop.Store(true)
	wg.Wait()
	assert.Empty(t, problems[:min(len(problems), 5)], "wrong leases (%d, the first 5 shown) among %d", len(problems), leases)
	assert.Positive(t, leases, "leases taken")
	require.NoError(t, l.Close(), "Close()")
	locktest.AssertUnlocked(t, node, "*swallowed:*", 10*time.Second)
}

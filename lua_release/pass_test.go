package luarelease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestUnlockHandsToLocalWaiter: when a goroutine of the holder's own Locker
// waits, Unlock serves it in the release's own script (the line's release script with
// the waiter's line member), and publishes no notice.
//   - waiter in line: B was refused and waits in the line in Redis, as
//     its head: it holds the lock when A's Unlock returns, with the next
//     fencing token, after 1 script. Before, the release published a
//     hand-off notice to the Locker's own inbox (and B's own attempt,
//     woken by the Unlock, made a second script).
//   - waiter not in line: B's place was lost (the line deleted), so the
//     release deletes the lock and B takes it by its own attempt, woken
//     by the Unlock: 2 scripts. A lock is put in the name only of a waiter
//     in the line, whose Abandon passes it on if it gives up.
func TestUnlockHandsToLocalWaiter(t *testing.T) {
	tests := []struct {
		name        string
		dropLine    bool
		wantScripts int
	}{
		{name: "waiter in line", wantScripts: 1},
		{name: "waiter not in line", dropLine: true, wantScripts: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, node, l, a := holding(t)
			b := waitingB(ctx, t, node, l)
			if tt.dropLine {
				if _, err := node.Do("DEL", lineK, seenK); err != nil {
					t.Fatalf("DEL line: %v", err)
				}
			}
			if _, err := node.Do("CONFIG", "RESETSTAT"); err != nil {
				t.Fatalf("CONFIG RESETSTAT: %v", err)
			}
			if err := a.Unlock(ctx); err != nil {
				t.Fatalf("A Unlock() = %v, want nil", err)
			}
			var lease strategy.Lease
			select {
			case lease = <-b:
			case <-time.After(5 * time.Second):
				t.Fatal("B did not get the lock within 5s of A's Unlock")
			}
			if lease == nil {
				return
			}
			scripts := locktest.ScriptsRun(t, node)
			if scripts != tt.wantScripts {
				t.Errorf("scripts run from A's Unlock to B holding the lock = %d, want %d", scripts, tt.wantScripts)
			}
			if n := locktest.CommandCalls(t, node, "publish"); n != 0 {
				t.Errorf("PUBLISH calls = %d, want 0: the waiter is handed the lock by its own Locker", n)
			}
			if got, want := lease.Fence(), a.Fence()+1; got != want {
				t.Errorf("B Fence() = %d, want %d", got, want)
			}
			if n, err := redis.Int(node.Do("EXISTS", lineK)); err != nil || n != 0 {
				t.Errorf("EXISTS line with B holding = %d, %v; want 0: B left it", n, err)
			}
			if err := lease.Unlock(ctx); err != nil {
				t.Errorf("B Unlock() = %v, want nil", err)
			}
			if n, err := redis.Int(node.Do("EXISTS", lockK)); err != nil || n != 0 {
				t.Errorf("EXISTS lock after B's Unlock = %d, %v; want 0", n, err)
			}
		})
	}
}

// waitingB starts B, a goroutine that locks "k" with l while another
// holds it, and returns once B waits at the head of the line in Redis,
// listening and asleep; the channel yields B's lease (nil after a failed
// Lock, which fails the test). B's goroutine ends when its Lock returns,
// bounded by ctx.
func waitingB(ctx context.Context, t *testing.T, node *redistest.Node, l strategy.Locker) <-chan strategy.Lease {
	t.Helper()
	b := make(chan strategy.Lease, 1)
	go func() {
		lease, err := l.Lock(ctx, "k")
		if err != nil {
			t.Errorf("B Lock() = %v, want nil", err)
		}
		b <- lease
	}()
	waitInLine(t, node, lineK, 1)
	waitSubscribed(t, node, inboxK+":")
	// B makes one more attempt once it listens (a notice may have gone by
	// while it subscribed), then sleeps for LineListened/2. Each refused
	// attempt of a waiter asks PUBSUB NUMSUB: the one before it subscribed
	// and that one make two.
	locktest.WaitCommandCalls(t, node, "pubsub|numsub", 2)
	return b
}

// TestUnlockServesRemoteHeadFirst: the local hand-off keeps the line's
// order. R, a waiter of another Locker, joined the line before B, a
// goroutine of the holder's Locker: A's Unlock hands the lock to R (by
// its notice), and B gets it only after R.
func TestUnlockServesRemoteHeadFirst(t *testing.T) {
	ctx, node, l, a := holding(t)
	remote := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	order := make(chan string, 2)
	var wg sync.WaitGroup
	defer wg.Wait() // before ctx ends: the waiters' Unlocks use it
	lockThen := func(who string, l strategy.Locker) {
		defer wg.Done()
		lease, err := l.Lock(ctx, "k")
		if err != nil {
			order <- who + " failed: " + err.Error()
			return
		}
		order <- who
		time.Sleep(20 * time.Millisecond) // so that the other waits
		if err := lease.Unlock(ctx); err != nil {
			t.Errorf("%s Unlock() = %v, want nil", who, err)
		}
	}
	wg.Add(2)
	go lockThen("R", remote)
	waitInLine(t, node, lineK, 1)
	go lockThen("B", l)
	waitInLine(t, node, lineK, 2)
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("A Unlock() = %v, want nil", err)
	}
	for _, want := range []string{"R", "B"} {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("next to get the lock = %s, want %s (R joined the line first)", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not get the lock within 5s", want)
		}
	}
}

// TestLostHandOffReplyCostsNothing: A's Unlock hands the lock to B, a
// goroutine of the same Locker at the head of the line, and the reply is
// lost (the proxy drops it). Unlock fails when its ctx ends and the lease
// is not spent; B, told to try, finds the lock in its name (acquire.lua)
// and holds it with the fencing token the release gave it; A's next
// Unlock finds the lock not A's. No lock is left held by nobody.
func TestLostHandOffReplyCostsNothing(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	proxy := redistest.NewProxy(t, node.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := newLocker(t, proxy.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	// The release script is cached on the node first, so that the reply
	// dropped below is the hand-off's, not a NOSCRIPT's.
	if warm, err := l.Lock(ctx, "warm"); err != nil || warm.Unlock(ctx) != nil {
		t.Fatalf("Lock and Unlock of another key = %v, want nil", err)
	}
	a, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("A Lock() = %v, want nil", err)
	}
	b := waitingB(ctx, t, node, l)
	// The release's reply, not one of B's last attempt still on its way
	// on the shared connection (DropNextReplies could take that one).
	proxy.DropReplyTo("EVALSHA")
	uctx, ucancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = a.Unlock(uctx)
	ucancel()
	if err == nil {
		t.Fatal("A Unlock() with its reply lost = nil, want an error")
	}
	var lease strategy.Lease
	select {
	case lease = <-b:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not get the lock within 5s of A's failed Unlock")
	}
	if lease == nil {
		return
	}
	if got, want := lease.Fence(), a.Fence()+1; got != want {
		t.Errorf("B Fence() = %d, want %d (the hand-off's)", got, want)
	}
	if err := a.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("A's second Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("B Unlock() = %v, want nil", err)
	}
	if n, err := redis.Int(node.Do("EXISTS", lockK)); err != nil || n != 0 {
		t.Errorf("EXISTS lock after B's Unlock = %d, %v; want 0", n, err)
	}
}

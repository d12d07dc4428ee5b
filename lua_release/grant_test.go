package luarelease_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// Redis keys of the lock "k" under the default prefix (protocol.KeysOf).
var (
	lockK  = protocol.LockKey("lock:", "k")
	lineK  = protocol.KeysOf(lockK).Line
	seenK  = protocol.KeysOf(lockK).Seen
	inboxK = protocol.Channel(lockK) // + ":" + a Locker's name: protocol.Inbox
)

// TestReleaseToWaitingHead: A holds "k" and B, in another Locker, waits
// in line when A releases.
//   - recent head: B attempts every 5 ms, so the release hands the lock to
//     B under B's waiter name (no "."), with the next fencing token.
//   - listening head: B's Retry would sleep an hour, so it attempts only
//     every LineStale/2 to keep its place, and A releases when B's last
//     attempt is 2-4 HandOffRecents old, well before B's next attempt: not
//     recent, but B's Locker listens on its inbox, so the release hands
//     the lock to B all the same. (A head that is not listening is only
//     named in a notice: TestAbandonPassesHandedLockOn, whose handOn is
//     the release's.)
//   - slow waiter keeps its place: as above, but A releases after twice
//     LineStale; B still hears of it and gets the lock within seconds.
func TestReleaseToWaitingHead(t *testing.T) {
	tests := []struct {
		name   string
		retry  strategy.Retry
		ready  func(t *testing.T, node *redistest.Node)
		handed string // "yes", "no", or "" for either
	}{
		{"recent head", strategy.Fixed(5 * time.Millisecond), nil, "yes"},
		{"listening head", noPolling, func(t *testing.T, node *redistest.Node) {
			waitLastSeen(t, node, 2*luarelease.HandOffRecent, 4*luarelease.HandOffRecent)
		}, "yes"},
		{"slow waiter keeps its place", noPolling, func(*testing.T, *redistest.Node) {
			time.Sleep(2 * luarelease.LineStale)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var ready func()
			if tt.ready != nil {
				ready = func() { tt.ready(t, node) }
			}
			a, b := releaseToWaiter(ctx, t, node, tt.retry, ready)
			switch tok := b.Token(); {
			case tt.handed == "yes" && strings.Contains(tok, "."):
				t.Errorf("B Token() = %q, want a waiter name without \".\" (handed the lock by the release)", tok)
			case tt.handed == "no" && !strings.Contains(tok, "."):
				t.Errorf("B Token() = %q, want an attempt token \"<waiter>.<n>\" (taken by B's own attempt, not handed)", tok)
			}
			checkNextHolder(t, node, a, b)
		})
	}
}

// waitLastSeen waits until the one waiter in lineK last attempted between
// lo and hi ago, by the server's clock.
func waitLastSeen(t *testing.T, node *redistest.Node, lo, hi time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		now, err := redis.Int64s(node.Do("TIME"))
		if err != nil || len(now) != 2 {
			t.Fatalf("TIME = %v, %v; want two integers", now, err)
		}
		v, err := redis.Strings(node.Do("ZRANGE", seenK, 0, 0, "WITHSCORES"))
		if err != nil || len(v) != 2 {
			continue
		}
		seen, err := strconv.ParseInt(v[1], 10, 64)
		if err != nil {
			t.Fatalf("ZRANGE %s WITHSCORES = %v, want a member and an integer score", seenK, v)
		}
		age := time.Duration(now[0]*1000+now[1]/1000-seen) * time.Millisecond
		if age >= lo && age <= hi {
			return
		}
	}
	t.Fatalf("the waiter in %s was never last seen between %v and %v ago", lineK, lo, hi)
}

// releaseToWaiter: A holds "k" (TTL 1 min); B, in another Locker with the
// Retry policy retry, calls Lock and waits in the key's line; A releases
// once B joined the line, subscribed to its notices and ready (if not nil)
// returned (handOver). It returns A's spent lease and B's lease.
func releaseToWaiter(ctx context.Context, t *testing.T, node *redistest.Node, retry strategy.Retry, ready func()) (a, b strategy.Lease) {
	t.Helper()
	la := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	lb := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: retry})
	return handOver(ctx, t, node, la, lb, ready)
}

// handOver: A, through la, locks "k"; B, through lb (another Locker),
// calls Lock and waits in the key's line; A releases once B joined the
// line, subscribed to its notices and ready (if not nil) returned. It
// returns A's spent lease and B's lease, which B must get within 5s; B's
// lease is released when the test ends.
func handOver(ctx context.Context, t *testing.T, node *redistest.Node, la, lb strategy.Locker, ready func()) (a, b strategy.Lease) {
	t.Helper()
	a, err := la.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("A Lock() = %v, want nil", err)
	}
	bDone := lockLease(ctx, lb, "k")
	waitInLine(t, node, lineK, 1)
	waitSubscribed(t, node, inboxK+":")
	if ready != nil {
		ready()
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("A Unlock() = %v, want nil", err)
	}
	b = waitLease(t, bDone, 5*time.Second, "B waits in line when A releases")
	t.Cleanup(func() {
		if err := b.Unlock(context.Background()); err != nil {
			t.Errorf("B Unlock() = %v, want nil", err)
		}
	})
	return a, b
}

// checkNextHolder checks that b, which got the lock right after a released
// it, holds it in Redis with the next fencing token and a deadline within
// its TTL (1 min).
func checkNextHolder(t *testing.T, node *redistest.Node, a, b strategy.Lease) {
	t.Helper()
	now := time.Now()
	if got, want := b.Fence(), a.Fence()+1; got != want {
		t.Errorf("B Fence() = %d, want %d (A's + 1)", got, want)
	}
	if got, want := locktest.Get(t, node, lockK), b.Token(); got != want {
		t.Errorf("GET %s = %q, want %q (B's token)", lockK, got, want)
	}
	if d := b.Deadline(); !d.After(now) || d.After(now.Add(time.Minute)) {
		t.Errorf("B Deadline() = %v, want in (%v, %v]", d, now, now.Add(time.Minute))
	}
}

type lockResult struct {
	lease strategy.Lease
	err   error
}

// lockLease runs Lock in a goroutine; the returned channel yields its
// result. The goroutine ends when Lock returns (bounded by ctx).
func lockLease(ctx context.Context, l strategy.Locker, key string) <-chan lockResult {
	done := make(chan lockResult, 1)
	go func() {
		lease, err := l.Lock(ctx, key)
		done <- lockResult{lease, err}
	}()
	return done
}

// waitLease returns the lease from done, or fails the test unless Lock
// succeeded within bound.
func waitLease(t *testing.T, done <-chan lockResult, bound time.Duration, why string) strategy.Lease {
	t.Helper()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("waiter Lock() = %v, want nil (%s)", r.err, why)
		}
		return r.lease
	case <-time.After(bound):
		t.Fatalf("waiter did not get the lock within %v (%s)", bound, why)
	}
	return nil
}

// TestAbandonPassesHandedLockOn: a waiter (w1 of Locker L1) that gives up
// after a release handed it the lock passes the lock on like a release;
// a waiter that holds nothing only leaves the line.
func TestAbandonPassesHandedLockOn(t *testing.T) {
	type member = lineMember
	w1 := "60000/L1/w1"
	w2 := "60000/L2/w2"
	tests := []struct {
		name      string
		lock      string   // the lock's value before w1 gives up; "" for none
		line      []member // the line before w1 gives up, head first
		wantLock  string   // "" for deleted
		wantFence int64
		wantLine  []string
		wantSent  []string // "<channel> <body>" published on the key's channels
		listening bool     // L2 listens on its inbox (a SUBSCRIBE, which NUMSUB counts)
	}{
		{
			name:      "recent waiter is handed the lock",
			lock:      "w1",
			line:      []member{{name: w2}},
			wantLock:  "w2",
			wantFence: 6,
			wantSent:  []string{inboxK + ":L2 handoff:6:w2"},
		},
		{
			name:      "nobody else in line: the lock is deleted",
			lock:      "w1",
			wantFence: 5,
		},
		{
			name:      "the abandoning waiter's own line entry is no taker",
			lock:      "w1",
			line:      []member{{name: w1}},
			wantFence: 5,
		},
		{
			name:      "head neither recent nor listening is named, the lock deleted",
			lock:      "w1",
			line:      []member{{name: w2, age: (luarelease.HandOffRecent + luarelease.LineStale) / 2}},
			wantFence: 5,
			wantLine:  []string{w2},
			wantSent:  []string{inboxK + ":L2 head:w2"},
		},
		{
			name:      "listening head not seen recently is handed the lock",
			lock:      "w1",
			line:      []member{{name: w2, age: (luarelease.HandOffRecent + luarelease.LineStale) / 2}},
			listening: true,
			wantLock:  "w2",
			wantFence: 6,
			wantSent:  []string{inboxK + ":L2 handoff:6:w2"},
		},
		{
			name:      "listening head unseen for LineStale keeps its place and is handed the lock",
			lock:      "w1",
			line:      []member{{name: w2, age: (luarelease.LineStale + luarelease.LineListened) / 2}},
			listening: true,
			wantLock:  "w2",
			wantFence: 6,
			wantSent:  []string{inboxK + ":L2 handoff:6:w2"},
		},
		{
			name:      "head unseen for LineStale whose Locker does not listen is dropped",
			lock:      "w1",
			line:      []member{{name: w2, age: (luarelease.LineStale + luarelease.LineListened) / 2}},
			wantFence: 5,
		},
		{
			name:      "listening head unseen for LineListened is dropped",
			lock:      "w1",
			line:      []member{{name: w2, age: luarelease.LineListened + luarelease.LineStale}},
			listening: true,
			wantFence: 5,
		},
		{
			name: "a dropped head drops no listening waiter behind it",
			lock: "w1",
			line: []member{
				{name: "60000/L3/w3", age: (luarelease.LineStale + luarelease.LineListened) / 2},
				{name: w2, age: (luarelease.LineStale + luarelease.LineListened) / 2},
			},
			listening: true,
			wantLock:  "w2",
			wantFence: 6,
			wantSent:  []string{inboxK + ":L2 handoff:6:w2"},
		},
		{
			name:      "free lock: the next head is told",
			line:      []member{{name: w1}, {name: w2}},
			wantFence: 5,
			wantLine:  []string{w2},
			wantSent:  []string{inboxK + ":L2 head:w2"},
		},
		{
			name:      "waiter that holds nothing only leaves the line",
			lock:      "other",
			line:      []member{{name: w1}, {name: w2}},
			wantLock:  "other",
			wantFence: 5,
			wantLine:  []string{w2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.listening {
				locktest.Listen(t, node, inboxK+":L2")
			}
			// Each member's age holds at the script's run only if the setup
			// and the script together take less than what keeps the member
			// on its side of HandOffRecent, LineStale and LineListened; on a loaded machine
			// (CI's Docker pass) they can take longer, so the step is
			// repeated until the server's clock says the premise held.
			window := ageWindow(tt.line)
			var sub *keySubscriber
			for try := 1; ; try++ {
				locktest.MustDo(t, node, "DEL", lockK, lineK, seenK)
				if tt.lock != "" {
					locktest.MustDo(t, node, "SET", lockK, tt.lock, "PX", 60000)
				}
				locktest.MustDo(t, node, "SET", luarelease.FenceKey(lockK), 5)
				sub = subscribeKey(t, node)
				nowUs := serverTimeUs(t, node)
				for i, m := range tt.line {
					// Arrival times a microsecond apart keep the order.
					locktest.MustDo(t, node, "ZADD", lineK, nowUs-int64(len(tt.line)-i), m.name)
					locktest.MustDo(t, node, "ZADD", seenK, (nowUs-m.age.Microseconds())/1000, m.name)
				}

				luarelease.AbandonForTest(ctx, node.Pool(), lockK, "w1", "L1", time.Minute)

				took := time.Duration(serverTimeUs(t, node)-nowUs) * time.Microsecond
				if took < window {
					break
				}
				if try == 5 {
					t.Fatalf("setup and abandon took %v on each of %d tries, want under %v (the members' ages would not hold)", took, try, window)
				}
				t.Logf("try %d: setup and abandon took %v, want under %v; again", try, took, window)
			}

			if got := locktest.Get(t, node, lockK); got != tt.wantLock {
				t.Errorf("GET %s = %q, want %q", lockK, got, tt.wantLock)
			}
			if got, err := redis.Int64(node.Do("GET", luarelease.FenceKey(lockK))); err != nil || got != tt.wantFence {
				t.Errorf("GET %s = %d, %v; want %d", luarelease.FenceKey(lockK), got, err, tt.wantFence)
			}
			if tt.wantLock != "" {
				if pttl := locktest.PTTL(t, node, lockK); pttl <= 59*time.Second || pttl > time.Minute {
					t.Errorf("PTTL %s = %v, want in (59s, 1m]", lockK, pttl)
				}
			}
			line, err := redis.Strings(node.Do("ZRANGE", lineK, 0, -1))
			if err != nil || !slices.Equal(line, tt.wantLine) {
				t.Errorf("ZRANGE %s = %q, %v; want %q", lineK, line, err, tt.wantLine)
			}
			seen, err := redis.Strings(node.Do("ZRANGE", seenK, 0, -1))
			if err != nil || !slices.Equal(seen, tt.wantLine) {
				t.Errorf("ZRANGE %s = %q, %v; want %q", seenK, seen, err, tt.wantLine)
			}
			if got := sub.published(t, node); !slices.Equal(got, tt.wantSent) {
				t.Errorf("published = %q, want %q", got, tt.wantSent)
			}
		})
	}
}

// serverTimeUs returns the node's clock, in µs since the epoch.
func serverTimeUs(t *testing.T, node *redistest.Node) int64 {
	t.Helper()
	tm, err := redis.Int64s(node.Do("TIME"))
	if err != nil || len(tm) != 2 {
		t.Fatalf("TIME = %v, %v; want [seconds µs]", tm, err)
	}
	return tm[0]*1_000_000 + tm[1]
}

// lineMember is a waiter written into the line by a test.
type lineMember struct {
	name string        // "<ttl ms>/<locker>/<waiter>"
	age  time.Duration // since its last attempt
}

// ageWindow is how long a setup that writes line may take before one of
// its members crosses HandOffRecent, LineStale or LineListened.
func ageWindow(line []lineMember) time.Duration {
	window := time.Hour
	for _, m := range line {
		for _, edge := range []time.Duration{luarelease.HandOffRecent, luarelease.LineStale, luarelease.LineListened} {
			if m.age < edge {
				window = min(window, edge-m.age)
				break
			}
		}
	}
	return window
}

// keySubscriber listens to every notice channel of the lock "k".
type keySubscriber struct {
	psc redis.PubSubConn
}

// sentinelChannel is where published ends the messages to collect: it is
// published after the command under test, on the same server, so every
// notice that command sent arrives before it.
var sentinelChannel = protocol.Inbox(lockK, "sentinel")

// subscribeKey subscribes a connection of its own to inboxK and all of
// its inboxes, and closes it when the test ends.
func subscribeKey(t *testing.T, node *redistest.Node) *keySubscriber {
	t.Helper()
	c, err := redis.Dial("tcp", node.Addr())
	if err != nil {
		t.Fatalf("Dial(%s) = %v, want nil", node.Addr(), err)
	}
	s := &keySubscriber{psc: redis.PubSubConn{Conn: c}}
	t.Cleanup(func() { _ = s.psc.Close() })
	if err := s.psc.PSubscribe(inboxK + "*"); err != nil {
		t.Fatalf("PSUBSCRIBE = %v, want nil", err)
	}
	switch m := s.psc.ReceiveWithTimeout(5 * time.Second).(type) {
	case redis.Subscription:
	default:
		t.Fatalf("PSUBSCRIBE reply = %v, want a subscription", m)
	}
	return s
}

// published returns the messages received so far, as "<channel> <body>".
func (s *keySubscriber) published(t *testing.T, node *redistest.Node) []string {
	t.Helper()
	locktest.MustDo(t, node, "PUBLISH", sentinelChannel, "")
	var got []string
	for {
		switch m := s.psc.ReceiveWithTimeout(5 * time.Second).(type) {
		case redis.Message:
			if m.Channel == sentinelChannel {
				return got
			}
			got = append(got, m.Channel+" "+string(m.Data))
		case error:
			t.Fatalf("Receive() = %v, want a message", m)
		}
	}
}

package luarelease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestAcquireFindsHandedLock: an attempt that overtakes the notice of a
// hand-off to its waiter finds the lock holding the waiter's name and
// reports it as its own, with the fence the hand-off took and what the
// lock has left.
func TestAcquireFindsHandedLock(t *testing.T) {
	tests := []struct {
		name    string
		lock    string // the lock's value
		line    bool   // someone else waits in line
		want    engine.Acquired
		wantErr error
	}{
		{name: "with a line", lock: "w1", line: true, want: engine.Acquired{Value: "w1", Fence: 5}},
		{name: "line emptied by the hand-off", lock: "w1", want: engine.Acquired{Value: "w1", Fence: 5}},
		{name: "handed to another waiter", lock: "w2", line: true, wantErr: strategy.ErrNotAcquired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			locktest.MustDo(t, node, "SET", lockK, tt.lock, "PX", 60000)
			locktest.MustDo(t, node, "SET", luarelease.FenceKey(lockK), 5)
			if tt.line {
				nowUs := serverTimeUs(t, node)
				locktest.MustDo(t, node, "ZADD", lineK, nowUs, "60000/L3/w3")
				locktest.MustDo(t, node, "ZADD", seenK, nowUs/1000, "60000/L3/w3")
			}

			g, err := luarelease.AcquireForTest(ctx, node.Pool(), lockK, "w1.3", "w1", "L1", time.Minute)

			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Acquire() = %+v, %v; want %v", g, err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Acquire() = %+v, %v; want nil", g, err)
				}
				if g.Value != tt.want.Value || g.Fence != tt.want.Fence || g.Validity <= 59*time.Second || g.Validity > time.Minute {
					t.Errorf("Acquire() = %+v, want %+v with Validity in (59s, 1m]", g, tt.want)
				}
			}
			if got := locktest.Get(t, node, lockK); got != tt.lock {
				t.Errorf("GET %s = %q, want %q (unchanged)", lockK, got, tt.lock)
			}
			if got, err := redis.Int64(node.Do("GET", luarelease.FenceKey(lockK))); err != nil || got != 5 {
				t.Errorf("GET %s = %d, %v; want 5 (unchanged)", luarelease.FenceKey(lockK), got, err)
			}
		})
	}
}

// TestAcquireJoinsUnderWaiterName: a refused attempt of a Lock call joins
// the line as "<ttl>/<locker>/<waiter>" whether the waiter's name is its
// token's part before the last "." (the script finds it, and the name is
// not sent) or not (the name is sent), in both of the line's keys, which
// then expire 4 x LineListened after the join.
func TestAcquireJoinsUnderWaiterName(t *testing.T) {
	tests := []struct {
		name, token, waiter string
	}{
		{name: "engine's token", token: "w1.3", waiter: "w1"},
		{name: "dotted waiter", token: "host.a.b.12", waiter: "host.a.b"},
		{name: "hand-off token", token: "w1.p2", waiter: "w1"},
		{name: "token is the waiter", token: "w1", waiter: "w1"},
		{name: "token with another prefix", token: "x.3", waiter: "w1"},
		{name: "suffix with a dot", token: "w1.3.4", waiter: "w1"},
		{name: "empty suffix", token: "w1.", waiter: "w1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			locktest.MustDo(t, node, "SET", lockK, "other", "PX", 60000)

			g, err := luarelease.AcquireForTest(ctx, node.Pool(), lockK, tt.token, tt.waiter, "L1", time.Minute)

			if !errors.Is(err, strategy.ErrNotAcquired) {
				t.Fatalf("Acquire() = %+v, %v; want %v", g, err, strategy.ErrNotAcquired)
			}
			want := protocol.Member{TTL: time.Minute, Locker: "L1", Waiter: tt.waiter}.String()
			for _, key := range []string{lineK, seenK} {
				got, err := redis.Strings(node.Do("ZRANGE", key, 0, -1))
				if err != nil || len(got) != 1 || got[0] != want {
					t.Errorf("ZRANGE %s = %q, %v; want [%q]", key, got, err, want)
				}
				// The line's keys expire 4 x LineListened after the join.
				if ms, err := redis.Int64(node.Do("PTTL", key)); err != nil || ms <= 0 || ms > (4*luarelease.LineListened).Milliseconds() {
					t.Errorf("PTTL %s = %d, %v; want in (0, %d]", key, ms, err, (4 * luarelease.LineListened).Milliseconds())
				}
			}
		})
	}
}

// TestRefusalSaysWhetherLockerListens: a refused attempt of a Lock call
// reports (BusyError.Listened) whether its Locker listens on its inbox on
// the lock's node, which decides how long the line keeps its place
// between attempts: LineListened when it does, LineStale when it does not
// (it listens on another node of a Redis Cluster, say, which NUMSUB does
// not count).
func TestRefusalSaysWhetherLockerListens(t *testing.T) {
	for _, listening := range []bool{false, true} {
		t.Run(fmt.Sprintf("listening=%v", listening), func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if listening {
				locktest.Listen(t, node, protocol.Inbox(lockK, "L1"))
			}
			locktest.Listen(t, node, protocol.Inbox(lockK, "L2")) // another Locker's inbox counts for nothing
			locktest.MustDo(t, node, "SET", lockK, "other", "PX", 60000)

			_, err := luarelease.AcquireForTest(ctx, node.Pool(), lockK, "w1.1", "w1", "L1", time.Minute)

			var busy *engine.BusyError
			if !errors.As(err, &busy) {
				t.Fatalf("Acquire() error = %v, want a *engine.BusyError", err)
			}
			if busy.Listened != listening {
				t.Errorf("BusyError.Listened = %v, want %v", busy.Listened, listening)
			}
			if busy.Remaining <= 59*time.Second {
				t.Errorf("BusyError.Remaining = %v, want the holder's PTTL, above 59s", busy.Remaining)
			}
		})
	}
}

package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// nodeEvent is something done to the nodes before a given acquisition.
type nodeEvent struct {
	at      int   // before acquisition number at
	kill    []int // node indexes killed
	restart []int // node indexes restarted (with their data)
}

// TestFenceIncreases takes the same key 1,000 times in a row, alternating
// two Lockers: every holder's fence must be above the one before. With
// persistent nodes killed and brought back (with their data) during the
// run, one or two at a time, the counters of the nodes that were down fall
// behind; the fences must still increase, and each restarted node is
// checked to lag when it comes back, so that the run does exercise
// diverged counters.
func TestFenceIncreases(t *testing.T) {
	tests := []struct {
		name    string
		opts    []redistest.Option
		events  []nodeEvent
		timeout time.Duration // for each Lock
	}{
		{name: "healthy nodes", timeout: 5 * time.Second},
		{
			name: "nodes killed and restarted with their data",
			opts: []redistest.Option{redistest.WithPersistence()},
			events: []nodeEvent{
				{at: 100, kill: []int{0}},
				{at: 250, kill: []int{1}},
				{at: 400, restart: []int{0}},
				{at: 550, restart: []int{1}},
				{at: 700, kill: []int{2, 3}},
				{at: 850, restart: []int{2, 3}},
			},
			// Lock may wait for the restart guard to count restarted
			// nodes again (one TTL) before a quorum is possible.
			timeout: 10 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			nodes := redistest.Start(t, 5, tt.opts...)
			// A short TTL keeps the restart guard's exclusion short.
			cfg := redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: time.Second}}
			lockers := []*redlock.Locker{newLocker(t, nodes, cfg), newLocker(t, nodes, cfg)}
			ctx := context.Background()
			events := tt.events
			var prev uint64
			for i := range 1000 {
				for len(events) > 0 && events[0].at == i {
					applyEvent(t, nodes, events[0])
					events = events[1:]
				}
				lease, err := lockWithin(lockers[i%2], "k", tt.timeout)
				if err != nil {
					t.Fatalf("acquisition %d: Lock() = %v, want nil", i, err)
				}
				if f := lease.Fence(); f <= prev {
					t.Fatalf("acquisition %d: Fence() = %d, want above the previous holder's %d", i, f, prev)
				}
				prev = lease.Fence()
				if err := lease.Unlock(ctx); err != nil {
					t.Fatalf("acquisition %d: Unlock() = %v, want nil", i, err)
				}
			}
		})
	}
}

// applyEvent kills or restarts nodes. A restarted node kept its data but
// missed the acquisitions made while it was down: its fencing counter must
// be below the largest one.
func applyEvent(t *testing.T, nodes []*redistest.Node, ev nodeEvent) {
	t.Helper()
	for _, i := range ev.kill {
		nodes[i].Kill()
	}
	for _, i := range ev.restart {
		nodes[i].Restart()
	}
	if len(ev.restart) == 0 {
		return
	}
	counters := fenceCounters(t, nodes, protocol.LockKey("lock:", "k"))
	top := slicesMax(counters)
	for _, i := range ev.restart {
		if counters[i] == 0 || counters[i] >= top {
			t.Errorf("counter of node %d after its restart = %d (all: %v), want kept (> 0) and behind the largest %d",
				i, counters[i], counters, top)
		}
	}
}

// fenceCounters returns the fencing counter of rkey on every node (0 where
// missing or unreachable).
func fenceCounters(t *testing.T, nodes []*redistest.Node, rkey string) []int64 {
	t.Helper()
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		v, err := redis.Int64(n.Do("GET", redlock.FenceKey(rkey)))
		if err != nil && !errors.Is(err, redis.ErrNil) {
			continue // a killed node
		}
		out[i] = v
	}
	return out
}

func slicesMax(s []int64) int64 {
	var m int64
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// TestFenceWriteBack makes the nodes' counters disagree by hand, so that
// the quorum that grants the lock returns different counters: the fence is
// one above the largest (1001), and the write-back round raises the
// others, so that afterwards the whole quorum holds it. (Nodes not set by
// hand are set to 1: a node without a counter starts from its clock.) The
// counters expire TTL + FenceRetention after their last write. The next
// holder finds them in step and gets 1002 everywhere without a write-back.
func TestFenceWriteBack(t *testing.T) {
	tests := []struct {
		name   string
		quorum int
		taken  []int           // nodes where another owner holds the key, so that the quorum is known
		set    map[int]int64   // counters set by hand
		want   map[int][]int64 // the counters after the first and the second acquire, by node
	}{
		{
			name:  "majority, two nodes held by another owner",
			taken: []int{3, 4},
			set:   map[int]int64{0: 500, 1: 1000},
			want:  map[int][]int64{0: {1001, 1002}, 1: {1001, 1002}, 2: {1001, 1002}},
		},
		{
			name:   "quorum of five",
			quorum: 5,
			set:    map[int]int64{1: 700, 3: 1000},
			want: map[int][]int64{0: {1001, 1002}, 1: {1001, 1002}, 2: {1001, 1002},
				3: {1001, 1002}, 4: {1001, 1002}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := startNodes(t, 5)
			ctx := context.Background()
			l := newLocker(t, nodes, redlock.Config{Quorum: tt.quorum, NodeTimeout: patient})
			for i := range nodes {
				v, ok := tt.set[i]
				if !ok {
					v = 1
				}
				if _, err := nodes[i].Do("SET", redlock.FenceKey(protocol.LockKey("lock:", "k")), v, "PX", time.Hour.Milliseconds()); err != nil {
					t.Fatalf("SET counter on node %d = %v, want nil", i, err)
				}
			}
			for _, i := range tt.taken {
				takeOn(t, nodes[i], protocol.LockKey("lock:", "k"))
			}
			for round, fence := range []uint64{1001, 1002} {
				lease := mustLock(t, l, "k")
				if got := lease.Fence(); got != fence {
					t.Errorf("acquire %d: Fence() = %d, want %d (one above the largest counter)", round+1, got, fence)
				}
				waitIdle(t, l)
				got := fenceCounters(t, nodes, protocol.LockKey("lock:", "k"))
				for i, want := range tt.want {
					if got[i] != want[round] {
						t.Errorf("acquire %d: counter on node %d = %d, want %d (all: %v)", round+1, i, got[i], want[round], got)
					}
				}
				if err := lease.Unlock(ctx); err != nil {
					t.Fatalf("acquire %d: Unlock() = %v, want nil", round+1, err)
				}
			}
			for i := range tt.want {
				limit := (strategy.DefaultTTL + protocol.FenceRetention).Milliseconds()
				if ms, err := redis.Int64(nodes[i].Do("PTTL", redlock.FenceKey(protocol.LockKey("lock:", "k")))); err != nil || ms <= 0 || ms > limit {
					t.Errorf("PTTL of the counter on node %d = %d, %v; want in (0, %d] (TTL + FenceRetention)", i, ms, err, limit)
				}
			}
		})
	}
}

// takeOn sets rkey on node as another owner's lock for a minute, so that
// the node refuses it.
func takeOn(t *testing.T, node *redistest.Node, rkey string) {
	t.Helper()
	if _, err := node.Do("SET", rkey, "other", "PX", 60000); err != nil {
		t.Fatalf("SET %s on %s = %v, want nil", rkey, node.Addr(), err)
	}
}

// TestFenceSurvivesLossOfTopNode: the node that gave a holder its fence
// drops out and the next holder's quorum avoids it. Holder A gets nodes 0-2
// (3 and 4 refuse: another owner's key is there) with node 0's counter at
// 1000 by hand and the others at 1: its fence is 1001, which the
// write-back leaves on nodes 1 and 2 as well. Then node 0 drops out (it
// refuses from now on) and nodes 3 and 4 are free again, their counters
// still at 1. B's quorum lies
// within nodes 1-4, so it meets node 1 or 2: its fence is 1002. Without
// the write-back it would be 2, below A's.
func TestFenceSurvivesLossOfTopNode(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	for i, v := range []int{1000, 1, 1, 1, 1} {
		if _, err := nodes[i].Do("SET", redlock.FenceKey(protocol.LockKey("lock:", "k")), v, "PX", time.Hour.Milliseconds()); err != nil {
			t.Fatalf("SET counter on node %d = %v, want nil", i, err)
		}
	}
	takeOn(t, nodes[3], protocol.LockKey("lock:", "k"))
	takeOn(t, nodes[4], protocol.LockKey("lock:", "k"))
	a := mustLock(t, l, "k")
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("A Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	takeOn(t, nodes[0], protocol.LockKey("lock:", "k"))
	for _, n := range nodes[3:] {
		if _, err := n.Do("DEL", protocol.LockKey("lock:", "k")); err != nil {
			t.Fatalf("DEL lock:k on %s = %v, want nil", n.Addr(), err)
		}
	}

	b := mustLock(t, l, "k")
	if a.Fence() != 1001 || b.Fence() != 1002 {
		t.Errorf("Fence() of A, then of B without node 0 = %d, %d; want 1001, 1002", a.Fence(), b.Fence())
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B Unlock() = %v, want nil", err)
	}
}

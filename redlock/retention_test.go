package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestFencesIncreaseAcrossCounterLoss: the next holder's fence is above
// the last one's although every node lost the counter: its retention
// passed (shortened here to 100 ms), FLUSHALL ran on every node under a
// holder that still believes it holds the lock, or every node restarted
// empty. The nodes then make new counters from their clocks.
func TestFencesIncreaseAcrossCounterLoss(t *testing.T) {
	rkey := protocol.LockKey("lock:", "k")
	tests := []struct {
		name string
		held bool // the last holder keeps its lease while the counters go
		lose func(t *testing.T, nodes []*redistest.Node)
	}{
		{name: "retention passed", lose: func(t *testing.T, nodes []*redistest.Node) {
			for deadline := time.Now().Add(5 * time.Second); ; {
				left := 0
				for _, n := range nodes {
					if v, _ := redis.Int(n.Do("EXISTS", FenceKey(rkey))); v == 1 {
						left++
					}
				}
				if left == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still on %d nodes 5 s after its TTL + retention", FenceKey(rkey), left)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}},
		{name: "FLUSHALL under a holder", held: true, lose: func(t *testing.T, nodes []*redistest.Node) {
			for _, n := range nodes {
				if _, err := n.Do("FLUSHALL"); err != nil {
					t.Fatalf("FLUSHALL on %s = %v", n.Addr(), err)
				}
			}
		}},
		{name: "restart without persistence", lose: func(t *testing.T, nodes []*redistest.Node) {
			for _, n := range nodes {
				n.Kill()
				n.Restart()
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Without the restart guard: this test is about the counters,
			// and the guard would keep restarted nodes out for one TTL.
			nodes, l, wait := startLocker(t, 5, Config{NodeTimeout: time.Second, Config: strategy.Config{TTL: 100 * time.Millisecond}, DisableRestartGuard: true})
			l.t.useRetention(100 * time.Millisecond)
			ctx := context.Background()
			var last uint64
			for i := range 3 {
				lease, err := l.Lock(ctx, "k")
				if err != nil {
					t.Fatalf("Lock() #%d = %v, want nil", i, err)
				}
				if f := lease.Fence(); f <= last {
					t.Fatalf("Fence() #%d = %d, want > %d", i, f, last)
				}
				last = lease.Fence()
				if tt.held {
					break
				}
				if err := lease.Unlock(ctx); err != nil {
					t.Fatalf("Unlock() #%d = %v, want nil", i, err)
				}
			}
			wait()
			tt.lose(t, nodes)
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			next, err := l.Lock(lctx, "k")
			if err != nil {
				t.Fatalf("Lock() after the counters were lost = %v, want nil", err)
			}
			if f := next.Fence(); f <= last {
				t.Errorf("Fence() after the counters were lost = %d, want > %d (the last holder's)", f, last)
			}
			_ = next.Unlock(ctx)
		})
	}
}

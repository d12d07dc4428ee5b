package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestWinnerLeavesRefusingLine: a Lock refused by one node (another
// client's lock is there) joins that node's line under the member the
// acquire script builds in Lua from its arguments; once it won on the
// other nodes it leaves that line under the member the client builds
// (protocol.Member). The two must be the same string.
func TestWinnerLeavesRefusingLine(t *testing.T) {
	nodes := startNodes(t, 5)
	// patient: a round that times out on a loaded machine retries and
	// joins the refusing node's line again (ZADD [6 2]).
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: 10 * time.Second}})
	rkey := protocol.LockKey("lock:", "k")
	k := protocol.KeysOf(rkey)
	if _, err := nodes[0].Do("SET", rkey, "someone-else", "PX", 60000); err != nil {
		t.Fatalf("SET = %v", err)
	}
	resetStats(t, nodes[:1])
	lease, err := l.Lock(context.Background(), "k")
	if err != nil {
		t.Fatalf("Lock() = %v, want nil", err)
	}
	waitIdle(t, l)
	if got := callsOf(t, nodes[0], "zadd", "zrem"); got[0] != 2 || got[1] != 2 {
		t.Errorf("ZADD, ZREM calls on the refusing node = %v, want [2 2] (joined the line and its last-seen times, then left both)", got)
	}
	for _, key := range []string{k.Line, k.Seen} {
		if n, err := redis.Int(nodes[0].Do("ZCARD", key)); err != nil || n != 0 {
			t.Errorf("ZCARD %s on the refusing node = %d, %v, want 0", key, n, err)
		}
	}
	if err := lease.Unlock(context.Background()); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

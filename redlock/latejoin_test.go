package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestGaveUpWaiterLateJoin: a waiter's attempt that reaches a node after
// the waiter gave up, and after its Abandon's leave reached that node,
// still joins the node's line there; the attempt must take it out again,
// or its place holds the node's copy of a free lock back for LineListened.
// Another client holds the lock on every node; the waiter's requests to
// node 1 are held back (a gate at pointAcquireOn(1)) until its Lock call
// gave up and its Abandon left every line. (Under load, a request sent
// just before the give-up overtook nothing and was seen so:
// TestGaveUpWaiterLeavesEveryLine/missed_leave, 'waiters in node 1's line
// ... want none'.)
func TestGaveUpWaiterLateJoin(t *testing.T) {
	nodes, l, wait := startLocker(t, 3, Config{NodeTimeout: 5 * time.Second, Config: strategy.Config{TTL: 10 * time.Second}})
	rkey := protocol.LockKey("lock:", "k")
	line := protocol.KeysOf(rkey).Line
	for i, n := range nodes {
		_, err := n.Do("SET", rkey, "someone-else", "PX", 60000)
		require.NoError(t, err, "SET on node %d", i)
	}
	inLine := func(i int) int {
		n, err := redis.Int(nodes[i].Do("ZCARD", line))
		require.NoError(t, err, "ZCARD %s on node %d", line, i)
		return n
	}

	gate := fault.NewGate(pointAcquireOn(1))
	t.Cleanup(gate.Open)
	ctx, cancel := context.WithCancel(fault.With(context.Background(), gate.Hook))
	defer cancel()
	done := make(chan error, 1)
	go func() { // ends when ctx is cancelled below
		lease, err := l.Lock(ctx, "k")
		if lease != nil {
			_ = lease.Unlock(context.Background())
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return inLine(0) == 1 && inLine(2) == 1 }, 10*time.Second, time.Millisecond,
		"the waiter never joined the lines of nodes 0 and 2")
	<-gate.Reached()
	cancel()
	require.ErrorIs(t, <-done, strategy.ErrNotAcquired, "Lock() after its ctx was cancelled")
	// An attempt sent to node 0 or 2 just before the cancel may join
	// after the leave too; it leaves again once its reply comes.
	require.Eventually(t, func() bool { return inLine(0) == 0 && inLine(2) == 0 }, 10*time.Second, time.Millisecond,
		"the waiter never left the lines of nodes 0 and 2 after Lock gave up")
	before := locktest.ScriptsRun(t, nodes[1])
	gate.Open() // the held-back attempts reach node 1 only now
	wait()
	require.Greater(t, locktest.ScriptsRun(t, nodes[1]), before, "scripts run on node 1 after the gate opened, want more (the held-back attempts ran)")
	for i := range nodes {
		assert.Zero(t, inLine(i), "waiters in node %d's line once the Lock call gave up and every background call ended, want none", i)
	}
}

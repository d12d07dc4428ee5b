package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestGaveUpWaiterLeavesEveryLine: a Lock call that gives up must not keep
// its place in any node's line once the node answers again, or that place
// holds the node's copy of a free lock for LineListened while its Locker
// listens (issue 28: after the chaos healed, free keys took up to 1.6 s to
// lock). Three nodes, node 2 behind a proxy; another client's lock is on
// the nodes named in held, so that the waiter is refused there and joins
// their lines. Once the waiter is in node 0's line, the proxy's fault
// starts and the waiter's ctx is cancelled; after Lock returned, the fault
// heals and the Locker's background calls end (Locker.Wait): then no line
// may still hold the waiter.
//   - late undo: node 2 is slow (Delay), the lock there is free, so the
//     waiter's attempt takes it after the Abandon's leave reached the
//     node, and the attempt's undo, which puts the waiter back in line
//     (release.lua), came after that leave. Before the fix the undo
//     requeued the gave-up waiter.
//   - failed round: as late undo, but the lock is free on node 1 too, so
//     the round is still undecided (one yes, one refusal, node 2 slow)
//     when ctx ends: the attempt fails with ctx's error, not a refusal.
//     Node 2 is slow from the start (faultFirst), or its quick yes would
//     decide the first round (two of three) before ctx ends.
//     Before the fix the engine called no Abandon for redlock then, and
//     the refusal had queued the waiter on node 0.
//   - missed leave: node 2 loses every request (BlackHole) while the
//     waiter gives up, so the Abandon's leave never reaches it. Before the
//     fix nothing sent it again: Abandon returned nil.
func TestGaveUpWaiterLeavesEveryLine(t *testing.T) {
	tests := []struct {
		name  string
		held  []int // nodes on which another client holds the lock
		fault func(p *redistest.Proxy)
		// faultFirst starts the fault before Lock is called, not once
		// the waiter is in node 0's line.
		faultFirst bool
	}{
		{name: "late undo", held: []int{0, 1}, fault: func(p *redistest.Proxy) { p.Delay(100 * time.Millisecond) }},
		{name: "failed round", held: []int{0}, fault: func(p *redistest.Proxy) { p.Delay(500 * time.Millisecond) }, faultFirst: true},
		{name: "missed leave", held: []int{0, 1, 2}, fault: func(p *redistest.Proxy) { p.BlackHole() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := startNodes(t, 3)
			proxy := redistest.NewProxy(t, nodes[2].Addr())
			pools := poolsOf(nodes)
			pools[2] = proxy.Pool()
			l, err := redlock.New(pools, redlock.Config{NodeTimeout: time.Second, Config: strategy.Config{TTL: 10 * time.Second}})
			require.NoError(t, err, "New()")
			locktest.CloseOnCleanup(t, l)
			t.Cleanup(func() { waitIdle(t, l) })

			rkey := protocol.LockKey("lock:", "k")
			line := protocol.KeysOf(rkey).Line
			for _, i := range tt.held {
				_, err := nodes[i].Do("SET", rkey, "someone-else", "PX", 60000)
				require.NoError(t, err, "SET on node %d", i)
			}
			inLine := func(i int) int {
				n, err := redis.Int(nodes[i].Do("ZCARD", line))
				require.NoError(t, err, "ZCARD %s on node %d", line, i)
				return n
			}

			if tt.faultFirst {
				tt.fault(proxy)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { // ends when ctx is cancelled below
				lease, err := l.Lock(ctx, "k")
				if lease != nil {
					_ = lease.Unlock(context.Background())
				}
				done <- err
			}()
			require.Eventually(t, func() bool { return inLine(0) == 1 }, 10*time.Second, time.Millisecond,
				"the waiter never joined node 0's line")
			if !tt.faultFirst {
				tt.fault(proxy)
			}
			cancel()
			err = <-done
			require.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock() after its ctx was cancelled")
			proxy.Heal()
			waitIdle(t, l)
			for i := range nodes {
				assert.Zero(t, inLine(i), "waiters in node %d's line once the Lock call gave up and every background call ended, want none", i)
			}
		})
	}
}

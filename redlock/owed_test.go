package redlock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestOwedReleasesToAFrozenNodeEnd: with one node of three frozen, every
// Unlock's release to it is skipped (or lost) and owed to it; the node's
// payer gives up once the node has taken nothing for twice NodeTimeout,
// so Wait returns soon after the last Unlock instead of waiting for the
// node, and nothing is left running once the Locker is closed.
func TestOwedReleasesToAFrozenNodeEnd(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := startNodes(t, 3)
	// NodeTimeout bounds the healthy nodes' replies too, and every Unlock
	// needs both: 50 ms failed Unlocks on a loaded machine. The payer gives
	// up after about 3 NodeTimeouts; the TTL keeps Wait's bound far above.
	const nodeTimeout = time.Second
	const ttl = time.Minute
	l, err := redlock.New(poolsOf(nodes), redlock.Config{Config: strategy.Config{TTL: ttl}, NodeTimeout: nodeTimeout})
	require.NoError(t, err, "New()")
	locktest.CloseOnCleanup(t, l)
	nodes[2].Pause()
	t.Cleanup(nodes[2].Resume) // before the Locker's Close and the teardown
	ctx := context.Background()
	for i := range 100 {
		lease := mustLock(t, l, fmt.Sprint("frozen:", i))
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() with one node frozen = %v, want nil", err)
		}
	}
	// The frozen node thaws only at the test's end, and the locks it owes
	// would expire by the TTL: a Wait that ends well before either is the
	// payer's giving up, whatever the machine's speed.
	waitCtx, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	start := time.Now()
	assert.NoError(t, l.Wait(waitCtx), "Wait() after the last Unlock, after %v, want nil within %v (the payer gives up on a frozen node)", time.Since(start), ttl/2)
}

package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
)

// TestQuorumHandOffDeadline: B waits in line on 5 nodes while A holds
// "k"; A's Unlock hands each node's copy to B, and B's Lock returns on the
// nodes' notices (a hand-off that is not local). B's Deadline is within
// [its Lock call's start, its return + TTL], and ahead when Lock returns:
// the quorum hand-off counts from B's latest attempt, which every counted
// node refused before it handed its copy.
func TestQuorumHandOffDeadline(t *testing.T) {
	nodes := startNodes(t, 5)
	alignFences(t, nodes, "k")
	la := newLocker(t, nodes, passConfig())
	rec := &locktest.Recorder{}
	cfg := passConfig()
	cfg.Observer = rec
	lb := newLocker(t, nodes, cfg)
	a := mustHoldAll(t, nodes, la, "k")
	start := time.Now()
	done := lockAsync(lb, "k", time.Minute)
	waitQueued(t, nodes, 1, len(nodes))
	waitSubscribed(t, nodes, protocol.LockKey("lock:", "k"))

	b := handOver(t, a, done)
	returned := time.Now()
	t.Cleanup(func() { _ = b.Unlock(context.Background()) })
	require.Equal(t, "handed-off acquired", locktest.Kinds(rec.For("k")), "B's Observer events (%s): want a hand-off (the case under test)", rec)
	require.False(t, rec.For("k")[0].HandedOff.Local, "B's hand-off: want one by releases in Redis, not local")
	locktest.CheckDeadline(t, b, start, returned, cfg.TTL)
	assert.True(t, b.Deadline().After(returned), "B's Deadline() = %v, not after Lock returned at %v", b.Deadline(), returned)
}

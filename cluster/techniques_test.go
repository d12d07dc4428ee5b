package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// testEveryTechnique runs every single-node technique through
// one Pool: Lock, Unlock and Extend reach the key's master, contention
// over keys on every master keeps mutual exclusion, and releases notify
// on shard channels only.
func testEveryTechnique(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	for _, target := range techniques.All() {
		if target.Nodes != 1 {
			continue
		}
		t.Run(target.Name, func(t *testing.T) {
			keys := spreadN(t, c, target.Name+":", 12, func(k string) string { return "lock:" + k })
			tl := newTally(keys)
			ls := targetLockers(t, target, p, 2)
			publish, spublish := commandCalls(t, c, "publish"), commandCalls(t, c, "spublish")
			stop := make(chan struct{})
			close(stop)
			tl.contend(ls, keys, 15, stop)
			tl.check(t)
			assert.Equal(t, publish, commandCalls(t, c, "publish"), "classic PUBLISH calls on the masters")
			assert.Greater(t, commandCalls(t, c, "spublish"), spublish, "SPUBLISH notices on the masters")

			lease, err := ls[0].Lock(context.Background(), keys[0])
			require.NoError(t, err)
			if err := lease.Extend(context.Background(), 5*time.Second); !assert.True(t, err == nil || errors.Is(err, strategy.ErrUnsupported), "Extend: %v", err) {
				return
			}
			require.NoError(t, lease.Unlock(context.Background()), "Unlock after Extend")
		})
	}
}

// braceNames are lock names with braces but no hash tag of their own.
var braceNames = []string{"a{}b", "{", "x}y", "}{", "{}"}

// testBraceKeys: a lock name with braces but no hash tag (so the whole
// key is hashed) has its notice channel and inboxes in the lock's slot, as
// CLUSTER KEYSLOT says, and every single-node technique locks, hands off
// and notifies (SPUBLISH in the release's script or transaction) on such
// keys under contention. lua_release's keys for such a name (LockKey) share
// one slot.
func testBraceKeys(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	for _, name := range braceNames {
		for _, key := range protocol.LockKeys(strategy.DefaultPrefix, name) {
			want := c.Slot(key)
			assert.Equal(t, want, c.Slot(protocol.Channel(key)), "slot of Channel(%q) = %q, want the lock's", key, protocol.Channel(key))
			assert.Equal(t, want, c.Slot(protocol.Inbox(key, "L:1")), "slot of Inbox(%q) = %q, want the lock's", key, protocol.Inbox(key, "L:1"))
		}
		tagged := protocol.KeysOf(protocol.LockKey(strategy.DefaultPrefix, name))
		for _, k := range tagged.All() {
			assert.Equal(t, c.Slot(tagged.Lock), c.Slot(k.(string)), "slot of %q, want that of the lock key %q", k, tagged.Lock)
		}
	}
	for _, target := range techniques.All() {
		if target.Nodes != 1 {
			continue
		}
		t.Run(target.Name, func(t *testing.T) {
			tl := newTally(braceNames)
			ls := targetLockers(t, target, p, 2)
			spublish := commandCalls(t, c, "spublish")
			stop := make(chan struct{})
			close(stop)
			tl.contend(ls, braceNames, 10, stop)
			tl.check(t)
			assert.Greater(t, commandCalls(t, c, "spublish"), spublish, "SPUBLISH notices on the masters")
		})
	}
}

// targetLockers returns n Lockers of target over p, each closed (where it has
// a Close) when the test ends.
func targetLockers(t *testing.T, target strategytest.Target, p *cluster.Pool, n int) []strategy.Locker {
	t.Helper()
	ls := make([]strategy.Locker, 0, n)
	for range n {
		l, err := target.New([]strategy.Pool{p}, strategy.Config{TTL: 10 * time.Second})
		require.NoError(t, err, "%s: New", target.Name)
		t.Cleanup(func() {
			if cl, ok := l.(interface{ Close() error }); ok {
				cl.Close()
			}
		})
		ls = append(ls, l)
	}
	return ls
}

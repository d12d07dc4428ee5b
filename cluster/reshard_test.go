package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// testReshardingUnderContention moves the slots of the keys in use twice
// while lua_release contends for them through one Pool (first master to
// second, then second to third), by hand as redis-cli --cluster reshard
// does. Nothing unsafe happens, no Lock or Unlock fails (MOVED, ASK and
// TRYAGAIN are followed), and every key is lockable within 1 s after.
func testReshardingUnderContention(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	keys := spreadN(t, c, "rs:", contendedKeys, lockName)
	masters := c.Masters()
	var slots []int
	seen := map[int]bool{}
	for _, k := range keys {
		if s := cluster.Slot(lockName(k)); c.NodeFor(lockName(k)) == masters[0] && !seen[s] {
			seen[s] = true
			slots = append(slots, s)
		}
	}
	require.NotEmpty(t, slots, "keys on the first master")

	tl := newTally(keys)
	ls := newLockers(t, p, tl)
	stop, ran := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ran)
		tl.contend(ls, keys, 20, stop)
	}()
	waitDone(t, tl, 200)
	for _, s := range slots {
		moveSlot(t, c, s, masters[0], masters[1], nil)
	}
	waitDone(t, tl, tl.done.Load()+200)
	for _, s := range slots {
		moveSlot(t, c, s, masters[1], masters[2], nil)
	}
	waitDone(t, tl, tl.done.Load()+200)
	close(stop)
	<-ran
	tl.check(t)
	t.Logf("%d critical sections over %d slots moved twice; %s", tl.done.Load(), len(slots), tl.retries())
	l, err := luarelease.New(p, strategy.Config{TTL: 10 * time.Second})
	require.NoError(t, err)
	defer l.Close()
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		lease, err := l.Lock(ctx, k)
		cancel()
		require.NoError(t, err, "Lock of %q within 1 s after the moves", k)
		require.NoError(t, lease.Unlock(context.Background()), "Unlock of %q", k)
	}
	for _, k := range keys {
		want := owner(t, c, lockName(k)).Addr()
		addr, err := p.MasterOf(lockName(k))
		require.NoError(t, err)
		assert.Equal(t, want, addr, "the Pool's map for %q after the moves", k)
	}
}

// waitDone waits until the run made n critical sections, for at most a
// minute (a hang bound, not a timing assertion).
func waitDone(t *testing.T, tl *tally, n int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for tl.done.Load() < n {
		require.True(t, time.Now().Before(deadline), "the run made %d critical sections of %d in a minute", tl.done.Load(), n)
		time.Sleep(10 * time.Millisecond)
	}
}

package cluster_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// newPool returns a Pool over c, seeded with its first master, closed
// when the test ends.
func newPool(t testing.TB, c *redistest.Cluster) *cluster.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := cluster.New(ctx, []string{c.Masters()[0].Addr()})
	require.NoError(t, err, "cluster.New on %s", c.Masters()[0].Addr())
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// spread returns n keys named prefix + i, perMaster on each master of c
// (by CLUSTER KEYSLOT and the map at the start).
func spread(t testing.TB, c *redistest.Cluster, prefix string, perMaster int, name func(string) string) []string {
	t.Helper()
	count := map[string]int{}
	var keys []string
	for i := 0; len(keys) < perMaster*len(c.Masters()); i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		addr := c.NodeFor(name(k)).Addr()
		if count[addr] < perMaster {
			count[addr]++
			keys = append(keys, k)
		}
		require.Less(t, i, 100000, "no spread of %d keys per master found", perMaster)
	}
	return keys
}

// same is the identity, for spread over plain keys.
func same(k string) string { return k }

// nodeID returns the cluster node ID of n.
func nodeID(t testing.TB, n *redistest.Node) string {
	t.Helper()
	id, err := redis.String(n.Do("CLUSTER", "MYID"))
	require.NoError(t, err, "CLUSTER MYID on %s", n.Addr())
	return id
}

// moveSlot moves slot from the master from to the master to, live, as
// `redis-cli --cluster reshard` does: SETSLOT IMPORTING on to, MIGRATING
// on from, MIGRATE of its keys until none is left, then SETSLOT NODE on
// every master. between, when not nil, runs once the slot is migrating
// and its keys have moved, before the slot is handed over.
func moveSlot(t testing.TB, c *redistest.Cluster, slot int, from, to *redistest.Node, between func()) {
	t.Helper()
	settleEpochs(t, c)
	fromID, toID := nodeID(t, from), nodeID(t, to)
	_, err := to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	require.NoError(t, err, "SETSLOT %d IMPORTING on %s", slot, to.Addr())
	_, err = from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	require.NoError(t, err, "SETSLOT %d MIGRATING on %s", slot, from.Addr())
	host, port, err := net.SplitHostPort(to.Addr())
	require.NoError(t, err)
	for range 1000 {
		keys, err := redis.Strings(from.Do("CLUSTER", "GETKEYSINSLOT", slot, 1000))
		require.NoError(t, err, "GETKEYSINSLOT %d on %s", slot, from.Addr())
		if len(keys) == 0 {
			break
		}
		args := []any{host, port, "", 0, 5000, "REPLACE", "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		_, err = from.Do("MIGRATE", args...)
		require.NoError(t, err, "MIGRATE of %d keys of slot %d", len(keys), slot)
	}
	if between != nil {
		between()
	}
	// The new owner first, then the old one, then the others (as
	// redis-cli does), so that no master serves the slot alongside.
	_, err = to.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	require.NoError(t, err, "SETSLOT %d NODE on %s", slot, to.Addr())
	_, err = from.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	require.NoError(t, err, "SETSLOT %d NODE on %s", slot, from.Addr())
	for _, m := range c.Masters() {
		if m != from && m != to {
			_, err = m.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
			require.NoError(t, err, "SETSLOT %d NODE on %s", slot, m.Addr())
		}
	}
	// Wait until every master names the new owner.
	deadline := time.Now().Add(20 * time.Second)
	for {
		agree := true
		for _, m := range c.Masters() {
			if ownerIn(t, m, slot) != toID {
				agree = false
				_, err = m.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
				require.NoError(t, err, "SETSLOT %d NODE on %s", slot, m.Addr())
			}
		}
		if agree {
			return
		}
		require.True(t, time.Now().Before(deadline), "the masters agree that %s serves slot %d", to.Addr(), slot)
		time.Sleep(20 * time.Millisecond)
	}
}

// settleEpochs waits until every master of c reports the same
// cluster_current_epoch. A master that takes a slot (SETSLOT NODE on the
// importing master) bumps its epoch above the highest it knows: when an
// earlier move's bump has not reached it yet, the old owner's claim,
// gossiped just before its own SETSLOT, can carry a higher epoch and take
// the slot back, and the new owner then deletes the slot's keys. Moves in
// quick succession (as a test makes them) must let the epochs spread.
func settleEpochs(t testing.TB, c *redistest.Cluster) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		epochs := map[string]bool{}
		for _, m := range c.Masters() {
			info, err := redis.String(m.Do("CLUSTER", "INFO"))
			require.NoError(t, err, "CLUSTER INFO on %s", m.Addr())
			epochs[redisinfo.Fields(info)["cluster_current_epoch"]] = true
		}
		if len(epochs) == 1 {
			return
		}
		require.True(t, time.Now().Before(deadline), "the masters agree on the cluster's epoch: %v", epochs)
		time.Sleep(20 * time.Millisecond)
	}
}

// ownerIn returns the ID of the node that serves slot in m's view
// (CLUSTER SLOTS), or "".
func ownerIn(t testing.TB, m *redistest.Node, slot int) string {
	t.Helper()
	ranges, err := redis.Values(m.Do("CLUSTER", "SLOTS"))
	require.NoError(t, err, "CLUSTER SLOTS on %s", m.Addr())
	for _, r := range ranges {
		vals, _ := redis.Values(r, nil)
		if len(vals) < 3 {
			continue
		}
		first, _ := redis.Int(vals[0], nil)
		last, _ := redis.Int(vals[1], nil)
		master, _ := redis.Values(vals[2], nil)
		if first <= slot && slot <= last && len(master) >= 3 {
			id, _ := redis.String(master[2], nil)
			return id
		}
	}
	return ""
}

// owner returns the master of c that serves key's slot now: the one
// that answers EXISTS key instead of redirecting it.
func owner(t testing.TB, c *redistest.Cluster, key string) *redistest.Node {
	t.Helper()
	for _, m := range c.Masters() {
		_, err := m.Do("EXISTS", key)
		if err == nil {
			return m
		}
	}
	require.FailNow(t, "no master serves the key", "key %q", key)
	return nil
}

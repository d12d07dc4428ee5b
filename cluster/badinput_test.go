package cluster_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestNewBadInput(t *testing.T) {
	plain := redistest.Start(t, 1)[0]
	for _, tc := range []struct {
		name  string
		seeds []string
		opts  []cluster.Option
		want  error
	}{
		{"no seeds", nil, nil, strategy.ErrInvalidConfig},
		{"an empty seed", []string{""}, nil, strategy.ErrInvalidConfig},
		{"nil dial", []string{plain.Addr()}, []cluster.Option{cluster.WithDial(nil)}, strategy.ErrInvalidConfig},
		{"negative max idle", []string{plain.Addr()}, []cluster.Option{cluster.WithMaxIdle(-1)}, strategy.ErrInvalidConfig},
		{"a node without cluster support", []string{plain.Addr()}, nil, cluster.ErrNotCluster},
		{"nothing listening", []string{closedAddr(t)}, nil, cluster.ErrNotCluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p, err := cluster.New(ctx, tc.seeds, tc.opts...)
			require.ErrorIs(t, err, tc.want, "cluster.New(%v)", tc.seeds)
			assert.Nil(t, p, "the Pool of a failed New")
			assert.Contains(t, err.Error(), "lockzoo: cluster:", "the error names the package")
			assert.Equal(t, 1, strings.Count(err.Error(), "lockzoo:"), "%q names lockzoo once", err)
		})
	}
	t.Run("a node without cluster support says so", func(t *testing.T) {
		_, err := cluster.New(context.Background(), []string{plain.Addr()})
		require.ErrorIs(t, err, cluster.ErrNotCluster)
		assert.Contains(t, err.Error(), plain.Addr(), "the error names the seed")
	})
}

// testClusterDown takes a slot away from every master (CLUSTER DELSLOTS):
// a key of that slot fails with an error wrapping ErrSlotUnserved, and
// once the cluster reports itself down (it needs every slot served), any
// key fails with one wrapping ErrClusterDown; neither panics, for
// lua_release or an article technique. Serving the slot again heals it.
func testClusterDown(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	lr, err := luarelease.New(p, strategy.Config{})
	require.NoError(t, err)
	defer lr.Close()
	sx, err := setnxex.New(p, strategy.Config{})
	require.NoError(t, err)
	defer sx.Close()
	ls := map[string]strategy.Locker{"lua_release": lr, "set_nx_ex": sx}

	lost := "{down}x" // its own tag: both techniques keep it as "lock:{down}x"
	slot := cluster.Slot(lockName(lost))
	require.Equal(t, slot, cluster.Slot("lock:"+lost), "both techniques' keys share the slot")
	owner := c.NodeFor(lockName(lost))
	// The owner first: a master whose slot is unassigned takes it back
	// from the gossip of a node that still claims it, so the owner
	// dropping it last could leave the others serving it for ever.
	masters := []*redistest.Node{owner}
	for _, m := range c.Masters() {
		if m.Addr() != owner.Addr() {
			masters = append(masters, m)
		}
	}
	for _, m := range masters {
		_, err := m.Do("CLUSTER", "DELSLOTS", slot)
		require.NoError(t, err, "DELSLOTS %d on %s", slot, m.Addr())
	}
	otherKey := spreadN(t, c, "up:", 1, lockName)[0]
	require.NotEqual(t, slot, cluster.Slot(lockName(otherKey)))

	t.Run("a pipeline's other commands", func(t *testing.T) {
		// A refused command fails alone: the one written with it on the
		// shared stream gets its reply.
		pipe := redisconn.NewPipeline(p)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.Eventually(t, func() bool {
			r1, r2, err := pipe.DoTwo(ctx, redisconn.Command{Name: "GET", Args: []any{lost}}, redisconn.Command{Name: "ECHO", Args: []any{"after"}})
			return err == nil && errors.Is(r1.Err, cluster.ErrSlotUnserved) && r2.Err == nil && r2.Value != nil
		}, 20*time.Second, 20*time.Millisecond, "DoTwo(GET of an unserved slot, ECHO): a refusal, then ECHO's reply")
		r1, r2, err := pipe.DoTwo(ctx, redisconn.Command{Name: "GET", Args: []any{lost}}, redisconn.Command{Name: "ECHO", Args: []any{"after"}})
		require.NoError(t, err)
		assert.True(t, redisconn.IsRefusal(r1.Err), "GET's error is a refusal: %v", r1.Err)
		got, err := redis.String(r2.Value, r2.Err)
		require.NoError(t, err)
		assert.Equal(t, "after", got)
	})
	for name, l := range ls {
		t.Run(name, func(t *testing.T) {
			require.Eventually(t, func() bool {
				_, err := l.TryLock(context.Background(), lost)
				return errors.Is(err, cluster.ErrSlotUnserved)
			}, 20*time.Second, 20*time.Millisecond, "TryLock of a key whose slot no master serves: ErrSlotUnserved")
			_, err := l.TryLock(context.Background(), lost)
			assert.Contains(t, err.Error(), "lockzoo: "+name+":", "the error names the technique")
			assert.True(t, redisconn.IsRefusal(err), "a refusal, which nothing is taken back after: %v", err)
			require.Eventually(t, func() bool {
				_, err := l.TryLock(context.Background(), otherKey)
				return errors.Is(err, cluster.ErrClusterDown)
			}, 20*time.Second, 20*time.Millisecond, "TryLock on a cluster that is down: ErrClusterDown")
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err = l.Lock(ctx, otherKey)
			require.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock that gave up on a cluster that is down")
			assert.ErrorIs(t, err, context.DeadlineExceeded, "Lock that gave up on its ctx")
		})
	}

	_, err = owner.Do("CLUSTER", "ADDSLOTS", slot)
	require.NoError(t, err, "ADDSLOTS %d on %s", slot, owner.Addr())
	require.Eventually(t, func() bool {
		for _, m := range c.Masters() {
			info, err := redis.String(m.Do("CLUSTER", "INFO"))
			if err != nil || !containsLine(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the cluster serves every slot again")
	for name, l := range ls {
		require.Eventually(t, func() bool {
			lease, err := l.TryLock(context.Background(), lost)
			return err == nil && lease.Unlock(context.Background()) == nil
		}, 20*time.Second, 20*time.Millisecond, "%s: TryLock and Unlock once the slot is served again", name)
	}
}

func containsLine(text, line string) bool {
	for _, l := range splitLines(text) {
		if l == line {
			return true
		}
	}
	return false
}

// splitLines splits text at its line ends (\r\n or \n).
func splitLines(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			end := i
			if end > start && text[end-1] == '\r' {
				end--
			}
			out = append(out, text[start:end])
			start = i + 1
		}
	}
	return append(out, text[start:])
}

// testClosedPool: after Close, GetContext and Subscriber return an error
// wrapping strategy.ErrClosed that names lockzoo and the package once.
func testClosedPool(t *testing.T, c *redistest.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := cluster.New(ctx, []string{c.Masters()[0].Addr()})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = p.GetContext(ctx)
	require.ErrorIs(t, err, strategy.ErrClosed, "GetContext after Close")
	assert.Equal(t, "lockzoo: cluster: locker closed", err.Error())
	_, err = p.Subscriber(ctx)
	require.ErrorIs(t, err, strategy.ErrClosed, "Subscriber after Close")
	assert.Equal(t, 1, strings.Count(err.Error(), "lockzoo:"), "%q names lockzoo once", err)
}

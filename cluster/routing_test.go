package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

func TestSlotKnownValues(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"foo", 12182},
		{"bar", 5061},
		{"{foo}.bar", 12182},
		{"x{foo}y{bar}", 12182},
		{"{}foo", cluster.Slot("{}foo")}, // an empty tag: the whole key
		{"", 0},
	} {
		t.Run(tc.key, func(t *testing.T) {
			assert.Equal(t, tc.want, cluster.Slot(tc.key), "Slot(%q)", tc.key)
		})
	}
	assert.NotEqual(t, cluster.Slot("foo"), cluster.Slot("{}foo"), "an empty tag must hash the whole key")
}

// testRouting runs commands through a Pool on a 3-master cluster: every
// key lands on the master of its slot, whatever the path (a command, a
// pipeline across masters, a transaction, a script), and notices go on
// shard channels.
func testRouting(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	ctx := context.Background()

	t.Run("slots agree with CLUSTER KEYSLOT", func(t *testing.T) {
		for i := range 200 {
			k := fmt.Sprintf("k{%d}x%d", i%7, i)
			if i%2 == 0 {
				k = fmt.Sprintf("plain:%d", i)
			}
			assert.Equal(t, c.Slot(k), cluster.Slot(k), "slot of %q", k)
		}
	})

	t.Run("every key lands on its master", func(t *testing.T) {
		keys := spread(t, c, "land:", 20, same)
		for _, k := range keys {
			_, err := redisconn.Do(ctx, p, "SET", k, "v:"+k)
			require.NoError(t, err, "SET %q", k)
		}
		for _, k := range keys {
			got, err := redis.String(c.NodeFor(k).Do("GET", k))
			require.NoError(t, err, "GET %q on its master %s", k, c.NodeFor(k).Addr())
			assert.Equal(t, "v:"+k, got, "value of %q on its master", k)
		}
		assert.Len(t, p.Masters(), 3, "masters in the map")
	})

	t.Run("a pipeline across masters keeps its replies in order", func(t *testing.T) {
		pipe := redisconn.NewPipeline(p)
		keys := spread(t, c, "pipe:", 30, same)
		var wg sync.WaitGroup
		errs := make(chan error, len(keys))
		for i, k := range keys {
			wg.Go(func() {
				for j := range 20 {
					v := fmt.Sprintf("%d.%d", i, j)
					if _, err := pipe.Do(ctx, "SET", []any{k, v}); err != nil {
						errs <- fmt.Errorf("SET %q: %w", k, err)
						return
					}
					got, err := redis.String(pipe.Do(ctx, "GET", []any{k}))
					if err != nil || got != v {
						errs <- fmt.Errorf("GET %q: got %q, %v; want %q", k, got, err, v)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("a transaction follows its WATCH", func(t *testing.T) {
		for _, k := range spread(t, c, "tx:", 2, same) {
			err := redisconn.WithConn(ctx, p, func(conn redis.Conn) error {
				if _, err := conn.Do("WATCH", k); err != nil {
					return err
				}
				if err := conn.Send("MULTI"); err != nil {
					return err
				}
				if err := conn.Send("SET", k, "tx"); err != nil {
					return err
				}
				replies, err := redis.Values(conn.Do("EXEC"))
				if err != nil || len(replies) != 1 {
					return fmt.Errorf("EXEC: %v, %v", replies, err)
				}
				return nil
			})
			require.NoError(t, err, "WATCH, MULTI, SET, EXEC of %q", k)
			got, err := redis.String(c.NodeFor(k).Do("GET", k))
			require.NoError(t, err)
			assert.Equal(t, "tx", got, "value of %q after the transaction", k)
		}
	})

	t.Run("a script runs on the master of its keys", func(t *testing.T) {
		script := redis.NewScript(1, `return redis.call("SET", KEYS[1], ARGV[1])`)
		for _, k := range spread(t, c, "lua:", 3, same) {
			_, err := redisconn.Eval(ctx, p, script, k, "lua")
			require.NoError(t, err, "script on %q", k)
			got, err := redis.String(c.NodeFor(k).Do("GET", k))
			require.NoError(t, err)
			assert.Equal(t, "lua", got, "value of %q after the script", k)
		}
	})

	t.Run("notices go on shard channels", func(t *testing.T) {
		chans := spread(t, c, "chan:", 2, same)
		sub, err := p.Subscriber(ctx)
		require.NoError(t, err)
		defer sub.Close()
		args := make([]any, len(chans))
		for i, ch := range chans {
			args[i] = ch
		}
		require.NoError(t, sub.Send("SSUBSCRIBE", args...))
		require.NoError(t, sub.Flush())
		confirmed := map[string]bool{}
		for len(confirmed) < len(chans) {
			v, err := redis.Values(redis.ReceiveWithTimeout(sub, 10*time.Second))
			require.NoError(t, err, "confirmations so far: %v", confirmed)
			kind, _ := redis.String(v[0], nil)
			ch, _ := redis.String(v[1], nil)
			require.Equal(t, "ssubscribe", kind, "reply %v", v)
			confirmed[ch] = true
		}
		before := commandCalls(t, c, "publish")
		for _, ch := range chans {
			n, err := redis.Int(redisconn.Do(ctx, p, "PUBLISH", ch, "hi:"+ch))
			require.NoError(t, err, "PUBLISH %q", ch)
			assert.Equal(t, 1, n, "receivers of %q", ch)
		}
		got := map[string]string{}
		for len(got) < len(chans) {
			v, err := redis.Values(redis.ReceiveWithTimeout(sub, 10*time.Second))
			require.NoError(t, err, "messages so far: %v", got)
			kind, _ := redis.String(v[0], nil)
			ch, _ := redis.String(v[1], nil)
			data, _ := redis.String(v[2], nil)
			require.Equal(t, "smessage", kind, "reply %v", v)
			got[ch] = data
		}
		for _, ch := range chans {
			assert.Equal(t, "hi:"+ch, got[ch], "message on %q", ch)
		}
		assert.Equal(t, before, commandCalls(t, c, "publish"), "classic PUBLISH calls on the masters")
	})
}

// commandCalls returns the calls of cmd (lower case) summed over c's
// masters (INFO commandstats).
func commandCalls(t testing.TB, c *redistest.Cluster, cmd string) int64 {
	t.Helper()
	var sum int64
	for _, m := range c.Masters() {
		sum += masterCalls(t, m, cmd)
	}
	return sum
}

// masterCalls returns the calls of cmd (lower case) on m.
func masterCalls(t testing.TB, m *redistest.Node, cmd string) int64 {
	t.Helper()
	info, err := redis.String(m.Do("INFO", "commandstats"))
	require.NoError(t, err, "INFO commandstats on %s", m.Addr())
	var calls int64
	if stat, ok := redisinfo.Fields(info)["cmdstat_"+cmd]; ok {
		_, err := fmt.Sscanf(stat, "calls=%d", &calls)
		require.NoError(t, err, "cmdstat_%s: %q", cmd, stat)
	}
	return calls
}

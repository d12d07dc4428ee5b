package cluster_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// other returns a master of c that is not n.
func other(c *redistest.Cluster, n *redistest.Node) *redistest.Node {
	for _, m := range c.Masters() {
		if m != n {
			return m
		}
	}
	return nil
}

// testRedirections moves slots by hand under a Pool whose map knew the
// old owner: during the migration commands are ASKed to the importing
// master, after it MOVED, and every path (a command, a pipeline, a
// transaction, a script) follows.
func testRedirections(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	ctx := context.Background()
	pipe := redisconn.NewPipeline(p)
	script := redis.NewScript(1, `return redis.call("GET", KEYS[1])`)

	for i, tc := range []struct {
		name string
		// do runs a command on key through p: a read of the value want,
		// or a write of it.
		do func(t *testing.T, key, want string)
	}{
		{"command", func(t *testing.T, key, want string) {
			got, err := redis.String(redisconn.Do(ctx, p, "GET", key))
			require.NoError(t, err, "GET %q", key)
			assert.Equal(t, want, got, "GET %q", key)
		}},
		{"pipeline", func(t *testing.T, key, want string) {
			got, err := redis.String(pipe.Do(ctx, "GET", []any{key}))
			require.NoError(t, err, "GET %q in the pipeline", key)
			assert.Equal(t, want, got, "GET %q in the pipeline", key)
		}},
		{"script", func(t *testing.T, key, want string) {
			got, err := redis.String(redisconn.Eval(ctx, p, script, key))
			require.NoError(t, err, "script GET %q", key)
			assert.Equal(t, want, got, "script GET %q", key)
		}},
		{"transaction", func(t *testing.T, key, want string) {
			err := redisconn.WithConn(ctx, p, func(conn redis.Conn) error {
				for range 10 { // EXEC is nil when the WATCH saw a write, or the slot moved
					if _, err := conn.Do("WATCH", key); err != nil {
						return fmt.Errorf("WATCH: %w", err)
					}
					got, err := redis.String(conn.Do("GET", key))
					if err != nil || got != want {
						return fmt.Errorf("GET: got %q, %v; want %q", got, err, want)
					}
					if err := conn.Send("MULTI"); err != nil {
						return err
					}
					if err := conn.Send("SET", key, want); err != nil {
						return err
					}
					replies, err := redis.Values(conn.Do("EXEC"))
					if err == redis.ErrNil {
						continue
					}
					if err != nil || len(replies) != 1 {
						return fmt.Errorf("EXEC: %v, %v", replies, err)
					}
					return nil
				}
				return fmt.Errorf("the transaction aborted 10 times")
			})
			require.NoError(t, err, "transaction on %q", key)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tag := fmt.Sprintf("{mv%d}", i)
			key, fresh := tag+"a", tag+"b"
			_, err := redisconn.Do(ctx, p, "SET", key, "v1")
			require.NoError(t, err)
			from := c.NodeFor(key)
			to := other(c, from)
			slot := cluster.Slot(key)
			moveSlot(t, c, slot, from, to, func() {
				tc.do(t, key, "v1") // ASK: the key moved, the slot not yet
				_, err := redisconn.Do(ctx, p, "SET", fresh, "new")
				require.NoError(t, err, "SET of a new key of the migrating slot")
				got, err := askingGet(to, fresh)
				require.NoError(t, err, "ASKING, GET of the new key on the importing master")
				assert.Equal(t, "new", got, "a new key of a migrating slot is made on the importing master")
			})
			tc.do(t, key, "v1") // MOVED, unless a refresh saw the move first
			require.Eventually(t, func() bool { addr, _ := p.MasterOf(key); return addr == to.Addr() }, 10e9, 10e6,
				"the map names the new master after a MOVED")
			// And back again.
			moveSlot(t, c, slot, to, from, nil)
			tc.do(t, key, "v1")
		})
	}
}

// askingGet reads key on the importing master n of a migrating slot.
func askingGet(n *redistest.Node, key string) (string, error) {
	conn := n.Pool().Get()
	defer conn.Close()
	if err := conn.Send("ASKING"); err != nil {
		return "", err
	}
	if err := conn.Send("GET", key); err != nil {
		return "", err
	}
	replies, err := redis.Values(conn.Do(""))
	if err != nil || len(replies) != 2 {
		return "", fmt.Errorf("ASKING, GET: %v, %v", replies, err)
	}
	return redis.String(replies[1], nil)
}

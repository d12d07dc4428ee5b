package redistest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
)

func TestKillRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     []Option
		wantKept bool // the key written before Kill survives Restart
	}{
		{name: "in memory", wantKept: false},
		{name: "persistent", opts: []Option{WithPersistence()}, wantKept: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := Start(t, 1, tc.opts...)[0]
			addr := node.Addr()
			setThroughPool(t, node, "k", "v")

			node.Kill()
			if _, err := node.Do("PING"); err == nil {
				t.Fatal("PING answered after Kill")
			}
			node.Kill() // killing a killed node does nothing
			node.Restart()
			if node.Addr() != addr {
				t.Fatalf("Addr() = %s after Restart, want %s", node.Addr(), addr)
			}
			// The first borrow after the restart must not get the
			// connection to the dead server.
			checkKept(t, node, "k", "v", tc.wantKept)

			// Restart alone kills the running server first.
			setThroughPool(t, node, "k2", "v2")
			node.Restart()
			checkKept(t, node, "k2", "v2", tc.wantKept)
		})
	}
}

// setThroughPool sets key to value on a connection of node's pool, and
// checks that the connection went back to the pool.
func setThroughPool(t *testing.T, node *Node, key, value string) {
	t.Helper()
	if _, err := poolDo(node, "SET", key, value); err != nil {
		t.Fatalf("SET %s through the pool: %v", key, err)
	}
	if idle := node.Pool().Stats().IdleCount; idle != 1 {
		t.Fatalf("IdleCount = %d after SET, want 1", idle)
	}
}

// checkKept reads key through node's pool and checks that it holds value
// when kept, and does not exist otherwise.
func checkKept(t *testing.T, node *Node, key, value string, kept bool) {
	t.Helper()
	v, err := redis.String(poolDo(node, "GET", key))
	switch {
	case kept && (err != nil || v != value):
		t.Errorf("GET %s through the pool after Restart = %q, %v; want %q", key, v, err, value)
	case !kept && !errors.Is(err, redis.ErrNil):
		t.Errorf("GET %s through the pool after Restart = %q, %v; want nil", key, v, err)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	const (
		deadline = 100 * time.Millisecond
		// The reply to a paused node never comes: the context ends the
		// wait, about 100 ms in when idle. Ten deadlines absorb the race
		// detector and other test binaries on a busy two-core machine three
		// times slower than usual; a wait that the context did not end
		// would last until Resume.
		maxWait = 10 * deadline
	)
	node := Start(t, 1)[0]
	pool := node.Pool()
	// Two connections opened before the pause, both back in the pool.
	c1, c2 := pool.Get(), pool.Get()
	for _, c := range []redis.Conn{c1, c2} {
		if _, err := c.Do("PING"); err != nil {
			t.Fatalf("PING before Pause: %v", err)
		}
	}
	c1.Close()
	c2.Close()

	node.Pause()
	start := time.Now() // before the context's deadline is set, so elapsed counts all of it
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	c := pool.Get()
	_, err := redis.DoContext(c, ctx, "PING")
	elapsed := time.Since(start)
	c.Close()
	// redigo's DoContext sets the read deadline to the context's deadline
	// and returns whichever fires first: the context's error or the
	// connection's i/o timeout.
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("PING on a paused node: err = %v, want context.DeadlineExceeded or an i/o timeout", err)
	}
	t.Logf("PING on the paused node: %v after %v", err, elapsed)
	assert.GreaterOrEqual(t, elapsed, deadline, "PING on a paused node failed that soon, want no reply before the deadline")
	assert.LessOrEqual(t, elapsed, maxWait, "PING on a paused node failed that late, want at the deadline %v", deadline)

	node.Resume()
	// The connection that timed out is gone; the other one, opened before
	// the pause, must still be lent and work.
	if idle := pool.Stats().IdleCount; idle != 1 {
		t.Fatalf("IdleCount = %d after Resume, want 1", idle)
	}
	c = pool.Get()
	defer c.Close()
	if pong, err := redis.String(c.Do("PING")); err != nil || pong != "PONG" {
		t.Fatalf("PING after Resume = %q, %v", pong, err)
	}
	if st := pool.Stats(); st.IdleCount != 0 || st.ActiveCount != 1 {
		t.Errorf("pool stats %+v: the connection from before the pause was not reused", st)
	}
}

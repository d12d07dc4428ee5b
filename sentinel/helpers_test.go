package sentinel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/sentinel"
)

// callTimeout bounds one call of a test to Redis or the Sentinels: long
// enough for a loaded machine, short enough to fail a hung test.
const callTimeout = 10 * time.Second

// newPool returns a Pool over s's Sentinels, closed when the test ends.
func newPool(t *testing.T, s *redistest.Sentinel, opts ...sentinel.Option) *sentinel.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p, err := sentinel.New(ctx, s.Name(), s.Addrs(), opts...)
	require.NoError(t, err, "sentinel.New(%q, %v)", s.Name(), s.Addrs())
	t.Cleanup(func() { require.NoError(t, p.Close(), "Close") })
	return p
}

// do runs one command on a connection from p.
func do(t *testing.T, p *sentinel.Pool, cmd string, args ...any) (any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := p.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// role returns the role the node behind a connection from p answers.
func role(t *testing.T, p *sentinel.Pool) string {
	t.Helper()
	reply, err := redis.Values(do(t, p, "ROLE"))
	require.NoError(t, err, "ROLE through the pool")
	require.NotEmpty(t, reply, "ROLE reply")
	r, err := redis.String(reply[0], nil)
	require.NoError(t, err, "ROLE reply %v", reply)
	return r
}

// waitFor polls cond every 20 ms until it holds, failing the test after
// timeout with what.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRole waits until n answers ROLE as want.
func waitRole(t *testing.T, n *redistest.Node, want string) {
	t.Helper()
	waitFor(t, resumeTimeout, n.Addr()+" answers ROLE "+want, func() bool {
		r, err := redistest.Role(n)
		return err == nil && r == want
	})
}

// isReadOnly reports whether err is a replica's READONLY error reply.
func isReadOnly(err error) bool {
	var e redis.Error
	return errors.As(err, &e) && strings.HasPrefix(string(e), "READONLY ")
}

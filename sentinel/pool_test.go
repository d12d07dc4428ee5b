package sentinel_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/sentinel"
	"github.com/lockzoo/lockzoo/strategy"
)

func TestPoolFindsMaster(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{})
	p := newPool(t, s)
	master := s.Master()
	require.Same(t, master, s.NodeAt(p.Addr()), "Addr() = %s, want the master %s", p.Addr(), master.Addr())
	assert.Equal(t, "master", role(t, p), "ROLE through the pool")

	_, err := do(t, p, "SET", "k", "v")
	require.NoError(t, err, "SET through the pool")
	v, err := redis.String(master.Do("GET", "k"))
	require.NoError(t, err)
	assert.Equal(t, "v", v, "GET k on the master after a SET through the pool")
}

func TestPoolAsksEachSentinelInTurn(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{})
	down := s.Sentinels()[:2]
	for _, sn := range down {
		sn.Kill()
	}
	addrs := append([]string{closedAddr(t)}, s.Addrs()...) // nothing, two dead, one alive
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p, err := sentinel.New(ctx, s.Name(), addrs)
	require.NoError(t, err, "New with one live sentinel of %v", addrs)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	assert.Same(t, s.Master(), s.NodeAt(p.Addr()), "Addr() = %s, want the master", p.Addr())
	assert.Equal(t, "master", role(t, p))
}

func TestNewBadInput(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1})
	replica := s.Nodes()[1]
	s.Monitor("wrong", replica)
	dead := []string{closedAddr(t), closedAddr(t)}

	tests := []struct {
		name      string
		master    string
		sentinels []string
		opts      []sentinel.Option
		want      error
		mentions  []string // in the message
	}{
		{"empty master name", "", s.Addrs(), nil, strategy.ErrInvalidConfig, []string{"empty master name"}},
		{"no sentinels", s.Name(), nil, nil, strategy.ErrInvalidConfig, []string{"no sentinel addresses"}},
		{"empty sentinel address", s.Name(), []string{s.Addrs()[0], ""}, nil, strategy.ErrInvalidConfig, []string{"address 1 is empty"}},
		{"negative option", s.Name(), s.Addrs(), []sentinel.Option{sentinel.WithMaxIdle(-1)}, strategy.ErrInvalidConfig, []string{"WithMaxIdle(-1)"}},
		{"unknown master name", "nosuchmaster", s.Addrs(), nil, sentinel.ErrUnknownMaster, []string{`"nosuchmaster"`, s.Addrs()[0]}},
		{"all sentinels down", s.Name(), dead, nil, sentinel.ErrNoSentinel, dead},
		{"master answers as a replica", "wrong", s.Addrs(), nil, sentinel.ErrNotMaster, []string{"slave", `"wrong"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			p, err := sentinel.New(ctx, tc.master, tc.sentinels, tc.opts...)
			require.Error(t, err, "New(%q, %v) = nil error, want %v", tc.master, tc.sentinels, tc.want)
			assert.Nil(t, p, "New's Pool on error")
			assert.ErrorIs(t, err, tc.want, "New(%q, %v) = %v", tc.master, tc.sentinels, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "lockzoo: sentinel: "), "message %q: want the prefix lockzoo: sentinel:", msg)
			assert.Equal(t, 1, strings.Count(msg, "lockzoo: "), "message %q names lockzoo more than once", msg)
			for _, m := range tc.mentions {
				assert.Contains(t, msg, m, "message %q", msg)
			}
		})
	}
}

func TestPoolAuthenticatesSeparately(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{
		Replicas:      1,
		SentinelUsers: []redistest.ACLUser{{Name: "watcher", Rules: "on >sentinel-pw +@all"}},
	}, redistest.WithACL(redistest.ACLUser{Name: "app", Rules: "on >node-pw ~* &* +@all"}))

	p := newPool(t, s, sentinel.WithSentinelAuth("watcher", "sentinel-pw"), sentinel.WithAuth("app", "node-pw"))
	who, err := redis.String(do(t, p, "ACL", "WHOAMI"))
	require.NoError(t, err)
	assert.Equal(t, "app", who, "ACL WHOAMI on the master through the pool")

	tests := []struct {
		name string
		opts []sentinel.Option
		want error // nil: only the message is checked
	}{
		{"wrong sentinel password", []sentinel.Option{sentinel.WithSentinelAuth("watcher", "bad"), sentinel.WithAuth("app", "node-pw")}, sentinel.ErrNoSentinel},
		{"wrong node password", []sentinel.Option{sentinel.WithSentinelAuth("watcher", "sentinel-pw"), sentinel.WithAuth("app", "bad")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			p, err := sentinel.New(ctx, s.Name(), s.Addrs(), tc.opts...)
			require.Error(t, err, "New with a wrong password = nil error")
			assert.Nil(t, p)
			assert.Contains(t, err.Error(), "WRONGPASS", "New's error %q", err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestCloseEndsPool(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1, Sentinels: 1})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p, err := sentinel.New(ctx, s.Name(), s.Addrs())
	require.NoError(t, err)
	c, err := p.GetContext(ctx)
	require.NoError(t, err)

	require.NoError(t, p.Close(), "Close")
	require.NoError(t, p.Close(), "second Close")
	assert.Empty(t, p.Addr(), "Addr() after Close")
	_, err = p.GetContext(ctx)
	assert.ErrorIs(t, err, strategy.ErrClosed, "GetContext after Close = %v", err)
	// A connection lent before Close still works until given back.
	_, err = redis.DoContext(c, ctx, "PING")
	assert.NoError(t, err, "PING on a connection lent before Close")
	require.NoError(t, c.Close())
}

// closedAddr returns a loopback address where nothing listens (a port
// that was free a moment ago).
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

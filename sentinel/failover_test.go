package sentinel_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/sentinel"
	"github.com/lockzoo/lockzoo/strategy"
)

// resumeTimeout bounds the wait for locking to resume after the master's
// death: the Sentinels' down-after and failover, on a loaded machine.
const resumeTimeout = 60 * time.Second

// newLocker returns a lua_release Locker over p, closed when the test ends.
func newLocker(t *testing.T, p *sentinel.Pool) *luarelease.Locker {
	t.Helper()
	l, err := luarelease.New(p, strategy.Config{TTL: 10 * time.Second})
	require.NoError(t, err, "luarelease.New over a sentinel.Pool")
	t.Cleanup(func() { require.NoError(t, l.Close(), "Locker.Close") })
	return l
}

// lockUnlock takes key with l, bounded by timeout, and releases it; it
// returns how long Lock took.
func lockUnlock(t *testing.T, l *luarelease.Locker, key string, timeout time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	lease, err := l.Lock(ctx, key)
	took := time.Since(start)
	require.NoError(t, err, "Lock(%q) after %v", key, took)
	require.NoError(t, lease.Unlock(ctx), "Unlock(%q)", key)
	return took
}

func TestLocksResumeAfterMasterKilled(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{})
	p := newPool(t, s)
	l := newLocker(t, p)
	lockUnlock(t, l, "before", callTimeout)

	killed := s.KillMaster()
	died := time.Now()
	// Lock keeps trying through the failover: every dial to the dead
	// master fails until the Sentinels name a replica. It runs beside
	// WaitFailover, so that both times are seen.
	type outcome struct {
		after time.Duration
		err   error
	}
	locked := make(chan outcome, 1)
	go func() { // ends when Lock returns, within resumeTimeout
		ctx, cancel := context.WithTimeout(context.Background(), resumeTimeout)
		defer cancel()
		lease, err := l.Lock(ctx, "after")
		after := time.Since(died)
		if err == nil {
			err = lease.Unlock(ctx)
		}
		locked <- outcome{after, err}
	}()
	promoted := s.WaitFailover(killed)
	named := time.Since(died)
	r := <-locked
	require.NoError(t, r.err, "Lock and Unlock after the master's death")
	t.Logf("from the master's death: every sentinel names the promoted replica after %v, the first Lock succeeds after %v (down-after %v)",
		named, r.after, time.Second)

	assert.Same(t, promoted, s.NodeAt(p.Addr()), "Addr() = %s, want the promoted %s", p.Addr(), promoted.Addr())
	assert.Equal(t, "master", role(t, p), "ROLE through the pool after the failover")
}

func TestPoolFollowsSentinelFailover(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{})
	switched := make(chan [2]string, 4)
	p := newPool(t, s, sentinel.WithOnSwitch(func(from, to string) { switched <- [2]string{from, to} }))
	l := newLocker(t, p)
	lockUnlock(t, l, "before", callTimeout)

	// A connection lent before the failover, still open after it.
	ctx, cancel := context.WithTimeout(context.Background(), resumeTimeout)
	defer cancel()
	held, err := p.GetContext(ctx)
	require.NoError(t, err)
	defer held.Close()
	_, err = redis.DoContext(held, ctx, "SET", "held", "1")
	require.NoError(t, err, "SET on the master before the failover")
	// SENTINEL FAILOVER does not wait for the replicas to catch up: the
	// write must be on every replica first, or the promoted one may lack it.
	acked, err := redis.Int(redis.DoContext(held, ctx, "WAIT", 2, 5000))
	require.NoError(t, err, "WAIT for the replicas")
	require.Equal(t, 2, acked, "replicas that acknowledged SET held 1")

	old, promoted := s.Failover()
	// No call to the pool since: its listener follows +switch-master.
	waitFor(t, resumeTimeout, "the pool moves to the promoted "+promoted.Addr(), func() bool {
		return s.NodeAt(p.Addr()) == promoted
	})
	select {
	case sw := <-switched:
		assert.Same(t, old, s.NodeAt(sw[0]), "OnSwitch from %s, want the old master %s", sw[0], old.Addr())
		assert.Same(t, promoted, s.NodeAt(sw[1]), "OnSwitch to %s, want the promoted %s", sw[1], promoted.Addr())
	default:
		t.Errorf("the pool moved to %s without calling OnSwitch", p.Addr())
	}

	// The old master comes back as a replica: the connection lent before
	// fails its write instead of writing where no one reads. The
	// Sentinels kill the node's clients as they demote it (CLIENT KILL
	// TYPE normal), so the error is the lost connection, or READONLY
	// when the write comes before the kill.
	waitRole(t, old, "slave")
	_, err = redis.DoContext(held, ctx, "SET", "held", "2")
	require.Error(t, err, "SET on a connection to the demoted master succeeded")
	t.Logf("SET on a connection to the demoted master: %v", err)

	assert.Equal(t, "master", role(t, p), "ROLE through the pool after the failover")
	lockUnlock(t, l, "after", resumeTimeout)
	v, err := redis.String(promoted.Do("GET", "held"))
	require.NoError(t, err)
	assert.Equal(t, "1", v, "GET held on the new master")
}

func TestListenerSurvivesItsSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{})
	p := newPool(t, s, sentinel.WithHealthInterval(200*time.Millisecond))
	// The pool listens to the first Sentinel, the one that answered New.
	s.Sentinels()[0].Kill()
	_, promoted := s.Failover()
	waitFor(t, resumeTimeout, "the pool moves to the promoted "+promoted.Addr(), func() bool {
		return s.NodeAt(p.Addr()) == promoted
	})
}

func TestConnectionToDemotedMasterFailsReadOnly(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1, Sentinels: 1})
	p := newPool(t, s)
	master, replica := s.Nodes()[0], s.Nodes()[1]
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	held, err := p.GetContext(ctx)
	require.NoError(t, err)
	defer held.Close()

	// Swap the roles behind the Sentinels' back: REPLICAOF keeps the
	// node's clients, unlike a Sentinel's demotion.
	_, err = replica.Do("REPLICAOF", "NO", "ONE")
	require.NoError(t, err, "REPLICAOF NO ONE on %s", replica.Addr())
	host, port, err := net.SplitHostPort(replica.Addr())
	require.NoError(t, err)
	_, err = master.Do("REPLICAOF", host, port)
	require.NoError(t, err, "REPLICAOF on %s", master.Addr())

	_, err = redis.DoContext(held, ctx, "SET", "k", "v")
	require.Error(t, err, "SET on a connection to the demoted master succeeded")
	assert.True(t, isReadOnly(err), "SET on a connection to the demoted master: err = %v, want READONLY", err)

	// The Sentinels still name the demoted node: a new connection finds
	// a replica and is refused.
	_, err = p.GetContext(ctx)
	require.Error(t, err, "GetContext while the Sentinels name a replica")
	assert.ErrorIs(t, err, sentinel.ErrNotMaster, "GetContext = %v", err)
	assert.Contains(t, err.Error(), "lockzoo: sentinel: ", "GetContext's error")
}

package luarelease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// replicated starts a primary and n replicas of it, in sync, and bounds
// the test's calls to 30 s.
func replicated(t *testing.T, n int) (ctx context.Context, primary *redistest.Node, replicas []*redistest.Node) {
	t.Helper()
	locktest.NoLeaks(t)
	primary = redistest.Start(t, 1)[0]
	for range n {
		replicas = append(replicas, primary.StartReplica())
	}
	primary.AwaitAcks(n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, primary, replicas
}

// kLine is the line of the lock "k" (Config.Prefix "lock:").
var kLine = protocol.KeysOf(protocol.LockKey(strategy.DefaultPrefix, "k")).Line

// lockValue returns the value of the lock "k" (Config.Prefix "lock:") on
// node, "" when there is none.
func lockValue(t *testing.T, node *redistest.Node) string {
	t.Helper()
	v, err := redis.String(node.Do("GET", protocol.LockKey(strategy.DefaultPrefix, "k")))
	if errors.Is(err, redis.ErrNil) {
		return ""
	}
	require.NoError(t, err, "GET the lock on %s", node.Addr())
	return v
}

// TestReplicasAcknowledge: with Replicas = 2 on a primary with 2 replicas,
// every lease the Locker grants (by its own acquire, by a local hand-off,
// and by a hand-off from a release of another Locker) is on both replicas
// when Lock returns, and an Extend is too.
func TestReplicasAcknowledge(t *testing.T) {
	ctx, primary, replicas := replicated(t, 2)
	// A generous wait: on a loaded machine a replica can be slow to
	// acknowledge, and this test is about what is acknowledged.
	cfg := strategy.Config{TTL: time.Minute, Replicas: 2, ReplicaTimeout: 10 * time.Second, Retry: noPolling}
	la := newLocker(t, primary.Pool(), cfg)
	lb := newLocker(t, primary.Pool(), cfg)
	onReplicas := func(t *testing.T, lease strategy.Lease, what string) {
		t.Helper()
		for _, r := range replicas {
			assert.Equal(t, lease.Token(), lockValue(t, r), "%s: the lock on replica %s when Lock returned: got the value, want the lease's token", what, r.Addr())
		}
	}

	first, err := la.Lock(ctx, "k")
	require.NoError(t, err, "Lock with both replicas up")
	onReplicas(t, first, "own acquire")
	assert.True(t, la.Properties().NodeFaultTolerant, "Properties().NodeFaultTolerant with Replicas 2: got false, want true")

	require.NoError(t, first.Extend(ctx, 2*time.Minute), "Extend with both replicas up")
	for _, r := range replicas {
		pttl, err := redis.Int64(r.Do("PTTL", protocol.LockKey(strategy.DefaultPrefix, "k")))
		require.NoError(t, err)
		assert.Greater(t, pttl, time.Minute.Milliseconds(), "PTTL on replica %s after Extend(2m): got %d ms, want above a minute", r.Addr(), pttl)
	}

	// Another goroutine of la waits: Unlock hands the lock to it (HandOff).
	local := make(chan strategy.Lease, 1)
	go func() {
		lease, err := la.Lock(ctx, "k")
		assert.NoError(t, err, "the local waiter's Lock")
		local <- lease
	}()
	waitInLine(t, primary, kLine, 1)
	require.NoError(t, first.Unlock(ctx))
	second := <-local
	require.NotNil(t, second)
	onReplicas(t, second, "local hand-off")

	// lb waits in the line in Redis: la's Unlock hands the lock to it by
	// a release in Redis, which lb confirms with an attempt of its own.
	remote := make(chan strategy.Lease, 1)
	go func() {
		lease, err := lb.Lock(ctx, "k")
		assert.NoError(t, err, "the other Locker's Lock")
		remote <- lease
	}()
	waitInLine(t, primary, kLine, 1)
	require.NoError(t, second.Unlock(ctx))
	third := <-remote
	require.NotNil(t, third)
	onReplicas(t, third, "hand-off by a release in Redis")
	require.NoError(t, third.Unlock(ctx))
}

// TestNotReplicated: with Replicas = 1 and every replica frozen, Lock and
// TryLock return ErrNotReplicated (Lock at its first attempt, well before
// its ctx ends), leave no lock behind, and grant no lease; an Extend of a
// lease granted before the freeze returns ErrNotReplicated and leaves the
// Deadline where it was, the lease unspent. Once the replicas thaw, Lock
// works again.
func TestNotReplicated(t *testing.T) {
	ctx, primary, replicas := replicated(t, 2)
	const wait = 50 * time.Millisecond
	l := newLocker(t, primary.Pool(), strategy.Config{TTL: time.Minute, Replicas: 1, ReplicaTimeout: wait})
	held, err := lockAcked(ctx, l, "held")
	require.NoError(t, err, "Lock before the freeze")
	for _, r := range replicas {
		r.Pause()
		t.Cleanup(r.Resume)
	}

	start := time.Now()
	lease, err := l.Lock(ctx, "k")
	t.Logf("Lock with every replica frozen returned after %v (ReplicaTimeout %v): %v", time.Since(start), wait, err)
	require.ErrorIs(t, err, strategy.ErrNotReplicated, "Lock with every replica frozen")
	assert.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock with every replica frozen")
	assert.NoError(t, ctx.Err(), "Lock returned because its ctx ended, not at its first unacknowledged attempt")
	assert.Nil(t, lease, "the lease Lock returned with ErrNotReplicated")
	assert.Empty(t, lockValue(t, primary), "the lock on the primary after Lock returned ErrNotReplicated")

	lease, err = l.TryLock(ctx, "k")
	require.ErrorIs(t, err, strategy.ErrNotReplicated, "TryLock with every replica frozen")
	assert.NotErrorIs(t, err, strategy.ErrNotAcquired, "TryLock with every replica frozen: not 'held by someone else'")
	assert.Nil(t, lease)
	assert.Empty(t, lockValue(t, primary), "the lock on the primary after TryLock returned ErrNotReplicated")

	deadline := held.Deadline()
	err = held.Extend(ctx, 2*time.Minute)
	require.ErrorIs(t, err, strategy.ErrNotReplicated, "Extend with every replica frozen")
	assert.Equal(t, deadline, held.Deadline(), "Deadline after an unacknowledged Extend: got moved, want unchanged")

	for _, r := range replicas {
		r.Resume()
	}
	require.NoError(t, held.Unlock(ctx), "Unlock after an unacknowledged Extend: the lease is not spent")
	lease, err = lockAcked(ctx, l, "k")
	require.NoError(t, err, "Lock once the replicas thawed")
	require.NoError(t, lease.Unlock(ctx))
}

// lockAcked locks key with l, again while the replicas do not acknowledge
// in time (a loaded machine, replicas catching up), until ctx ends.
func lockAcked(ctx context.Context, l strategy.Locker, key string) (strategy.Lease, error) {
	for {
		lease, err := l.Lock(ctx, key)
		if !errors.Is(err, strategy.ErrNotReplicated) || ctx.Err() != nil {
			return lease, err
		}
	}
}

// TestReplicasConfig: bad replica settings fail New with ErrInvalidConfig
// naming the field; a technique that does not wait for replicas refuses
// Replicas rather than grant leases no replica acknowledged.
func TestReplicasConfig(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	tests := []struct {
		name string
		cfg  strategy.Config
		want string
	}{
		{"negative replicas", strategy.Config{Replicas: -1}, "Replicas -1"},
		{"negative timeout", strategy.Config{Replicas: 1, ReplicaTimeout: -time.Second}, "ReplicaTimeout -1s"},
		{"timeout below 1ms", strategy.Config{Replicas: 1, ReplicaTimeout: time.Microsecond}, "below 1ms"},
		{"timeout not below the TTL", strategy.Config{Replicas: 1, TTL: time.Second, ReplicaTimeout: time.Second}, "not below the TTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := luarelease.New(node.Pool(), tc.cfg)
			require.ErrorIs(t, err, strategy.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestWaitAOF: with WaitAOF on a server without WAITAOF (Redis before
// 7.2), Lock fails at once with an error naming the setting and takes
// nothing; on a server with it (LOCKZOO_REDIS_SERVER=valkey-server) and
// appendonly on, Lock succeeds.
func TestWaitAOF(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1, redistest.WithFlags("--appendonly", "yes", "--appendfsync", "always"))[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	info, err := redis.Values(node.Do("COMMAND", "INFO", "WAITAOF"))
	require.NoError(t, err)
	has := len(info) > 0 && info[0] != nil
	l := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute, WaitAOF: true, ReplicaTimeout: 10 * time.Second})
	lease, err := l.Lock(ctx, "k")
	if !has {
		t.Logf("the server has no WAITAOF: %v", err)
		require.ErrorIs(t, err, strategy.ErrInvalidConfig, "Lock with WaitAOF on a server without WAITAOF")
		assert.ErrorIs(t, err, strategy.ErrUnsupported)
		assert.Contains(t, err.Error(), "WaitAOF")
		assert.Empty(t, lockValue(t, node), "the lock after a refused WaitAOF Lock")
		return
	}
	require.NoError(t, err, "Lock with WaitAOF and appendonly yes")
	require.NoError(t, lease.Unlock(ctx))
}

package redistest

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

func TestStartReplicated(t *testing.T) {
	t.Parallel()
	primary, replicas := StartReplicated(t, 2)
	require.Len(t, replicas, 2, "replicas: got %d, want 2", len(replicas))
	checkBackend(t, primary)

	info, err := redis.String(primary.Do("INFO", "replication"))
	require.NoError(t, err)
	fields := redisinfo.Fields(info)
	assert.Equal(t, "master", fields["role"], "primary's role")
	assert.Equal(t, "2", fields["connected_slaves"], "primary's connected_slaves")
	for _, r := range replicas {
		// Every replica is announced at an address the host reaches.
		assert.Contains(t, info, "port="+portOf(t, r.peerAddr()), "INFO replication of the primary names replica %s", r.Addr())
		role, err := Role(r)
		require.NoError(t, err)
		assert.Equal(t, "slave", role, "ROLE of replica %s", r.Addr())
	}

	// WAIT counts both replicas: a write reaches them.
	mustDo(t, primary, "SET", "k", "v")
	c := primary.Pool().Get()
	defer c.Close()
	_, err = c.Do("SET", "k2", "v2")
	require.NoError(t, err)
	acked, err := redis.Int(c.Do("WAIT", 2, 5000))
	require.NoError(t, err)
	assert.Equal(t, 2, acked, "WAIT 2 5000: replicas that acknowledged")
	for _, r := range replicas {
		waitKey(t, r, "k", "v")
		if _, err := r.Do("SET", "x", "1"); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
			t.Errorf("SET on replica %s: err = %v, want READONLY", r.Addr(), err)
		}
	}
}

// TestFollow: a failover by hand. The primary dies; the replica with the
// higher offset is promoted, the other follows it (REPLICAOF) and gets
// what is written there, and WAIT on the promoted one counts it
// (AwaitAcks); the old primary comes back and follows too.
func TestFollow(t *testing.T) {
	t.Parallel()
	primary := Start(t, 1)[0]
	a, b := primary.StartReplica(), primary.StartReplica()
	primary.AwaitAcks(2)
	mustDo(t, primary, "SET", "before", "1")
	waitKey(t, a, "before", "1")
	waitKey(t, b, "before", "1")
	oa, err := a.ReplOffset()
	require.NoError(t, err, "ReplOffset of a replica")
	require.Positive(t, oa, "ReplOffset of a replica: got %d, want > 0", oa)

	primary.Kill()
	a.Promote()
	b.Follow(a)
	primary.Restart()
	primary.Follow(a)
	a.AwaitAcks(2)
	mustDo(t, a, "SET", "after", "2")
	waitKey(t, b, "after", "2")
	waitKey(t, primary, "after", "2")
	v, _ := getString(t, primary, "before")
	assert.Equal(t, "1", v, "the old primary, following the promoted replica: GET before")
}

// TestAdopt: the promoted replica takes the other two at once, and WAIT
// on it counts both.
func TestAdopt(t *testing.T) {
	t.Parallel()
	primary, replicas := StartReplicated(t, 3)
	primary.Kill()
	promoted := replicas[0]
	promoted.Promote()
	promoted.Adopt(replicas[1:]...)
	promoted.AwaitAcks(2)
	mustDo(t, promoted, "SET", "after", "1")
	for _, r := range replicas[1:] {
		waitKey(t, r, "after", "1")
		role, err := Role(r)
		require.NoError(t, err)
		assert.Equal(t, "slave", role, "ROLE of %s after Adopt", r.Addr())
	}
}

// portOf returns the port of a host:port address.
func portOf(t *testing.T, addr string) string {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	require.GreaterOrEqual(t, i, 0, "address %q has no port", addr)
	return addr[i+1:]
}

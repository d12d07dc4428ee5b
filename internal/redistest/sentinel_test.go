package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartSentinelFailsOver(t *testing.T) {
	t.Parallel()
	s := StartSentinel(t, SentinelConfig{})
	require.Len(t, s.Nodes(), 3, "data nodes: want a primary and 2 replicas")
	require.Len(t, s.Addrs(), 3, "sentinels")
	first := s.Nodes()[0]
	require.Same(t, first, s.Master(), "the master at the start: got %s, want %s", s.Master().Addr(), first.Addr())
	// A key every replica acknowledged survives both failovers below.
	c := first.Pool().Get()
	_, err := c.Do("SET", "acked", "1")
	require.NoError(t, err)
	acked, err := redis.Int(c.Do("WAIT", 2, 10000))
	require.NoError(t, c.Close())
	require.NoError(t, err)
	require.Equal(t, 2, acked, "WAIT 2: replicas that acknowledged the SET")
	for _, sn := range s.Sentinels() {
		role, err := Role(sn)
		require.NoError(t, err)
		assert.Equal(t, "sentinel", role, "ROLE of %s", sn.Addr())
		// Known from sentinel.conf, before any hello message.
		others, err := instances(sn, "SENTINELS", s.Name())
		require.NoError(t, err)
		assert.Len(t, others, 2, "sentinel %s knows %d other sentinels at the start, want 2: %v", sn.Addr(), len(others), others)
	}

	// SENTINEL FAILOVER: the old master stays up and becomes a replica.
	old, promoted := s.Failover()
	require.Same(t, first, old, "Failover's old master")
	require.NotSame(t, old, promoted, "Failover promoted the old master %s", old.Addr())
	role, err := Role(promoted)
	require.NoError(t, err)
	assert.Equal(t, "master", role, "ROLE of the promoted %s", promoted.Addr())

	// A kill: the Sentinels deem the master down and promote a replica.
	killed := s.KillMaster()
	require.Same(t, promoted, killed, "KillMaster killed %s, want the master %s", killed.Addr(), promoted.Addr())
	start := time.Now()
	next := s.WaitFailover(killed)
	t.Logf("failover after a kill took %v", time.Since(start))
	require.NotSame(t, killed, next, "WaitFailover returned the killed master")
	require.Same(t, next, s.Master(), "Master() after the failover")
	v, ok := getString(t, next, "acked")
	assert.True(t, ok && v == "1", "the new master lost a key every replica acknowledged: GET acked = %q, %v", v, ok)
}

func TestSentinelMonitorNamesAnyNode(t *testing.T) {
	t.Parallel()
	s := StartSentinel(t, SentinelConfig{Replicas: 1})
	replica := s.Nodes()[1]
	s.Monitor("wrong", replica)
	for _, sn := range s.Sentinels() {
		addr, err := masterAddr(sn, "wrong")
		require.NoError(t, err)
		assert.Same(t, replica, s.NodeAt(addr), "sentinel %s names %s for wrong, want the replica %s", sn.Addr(), addr, replica.Addr())
	}
}

func TestSentinelConf(t *testing.T) {
	t.Parallel()
	cfg := SentinelConfig{SentinelUsers: []ACLUser{{Name: "app", Rules: "on >pw +@all"}}}.withDefaults()
	conf, err := sentinelConf(cfg, "127.0.0.1:7000", []string{"127.0.0.1:7001", "10.0.0.1:7002"})
	require.NoError(t, err)
	for _, line := range []string{
		"sentinel monitor mymaster 127.0.0.1 7000 2\n",
		"sentinel down-after-milliseconds mymaster 1000\n",
		"sentinel failover-timeout mymaster 3000\n",
		"sentinel parallel-syncs mymaster 2\n", // every replica (the default, 0)
		"sentinel known-replica mymaster 127.0.0.1 7001\n",
		"sentinel known-replica mymaster 10.0.0.1 7002\n",
		"user default " + defaultRules + "\n",
		"user app on >pw +@all\n",
	} {
		assert.Contains(t, conf, line, "sentinel.conf lacks a line")
	}
}

func TestSentinelConfigCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  SentinelConfig
		want string // in the error; "" for none
	}{
		{"defaults", SentinelConfig{}, ""},
		{"name with a space", SentinelConfig{Name: "my master"}, "Name"},
		{"negative replicas", SentinelConfig{Replicas: -1}, "Replicas"},
		{"quorum above sentinels", SentinelConfig{Sentinels: 3, Quorum: 4}, "Quorum"},
		{"one sentinel", SentinelConfig{Sentinels: 1}, ""},
		{"negative parallel syncs", SentinelConfig{ParallelSyncs: -1}, "ParallelSyncs"},
		{"one sync at a time", SentinelConfig{ParallelSyncs: 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.withDefaults().check()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err, "check() = nil, want an error naming %s", tc.want)
			assert.True(t, strings.Contains(err.Error(), tc.want), "check() = %v, want it to name %s", err, tc.want)
		})
	}
}

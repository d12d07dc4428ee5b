package redistest

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// leasedElsewhere reports whether some holder other than a new open of
// the file has the lease of port in dir.
func leasedElsewhere(t *testing.T, dir, port string) bool {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, port), os.O_RDWR|os.O_CREATE, 0o666)
	require.NoError(t, err)
	defer f.Close()
	ok, err := lockFile(f)
	require.NoError(t, err)
	if ok {
		require.NoError(t, unlockFile(f))
	}
	return !ok
}

// leaseTwo leases two ports in the shared directory for the test, so that
// no other test binary takes them while the test uses them.
func leaseTwo(t *testing.T) (p, q int) {
	t.Helper()
	ports := make([]int, 2)
	for i := range ports {
		port, err := strconv.Atoi(LeasePort(t))
		require.NoError(t, err)
		ports[i] = port
	}
	return ports[0], ports[1]
}

// TestLeaseSkipsTakenPort checks that the picker passes over a port
// another holder has leased and a port something listens on.
func TestLeaseSkipsTakenPort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// take makes port taken in dir until the test ends.
		take func(t *testing.T, dir string, port int)
	}{
		{"leased by another holder", func(t *testing.T, dir string, port int) {
			other, err := tryLease(dir, port)
			require.NoError(t, err)
			require.NotNil(t, other, "lease of free port %d in an empty directory", port)
			t.Cleanup(func() { assert.NoError(t, other.release()) })
		}},
		{"bound by a listener", func(t *testing.T, _ string, port int) {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, ln.Close()) })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, q := leaseTwo(t)
			dir := t.TempDir()
			tc.take(t, dir, p)
			got, err := leaseIn(dir, []int{p, q})
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, got.release()) })
			assert.Equal(t, strconv.Itoa(q), got.port, "leased port of [%d (taken), %d]", p, q)
		})
	}
}

// TestLeaseHeldUntilReleased checks the range of a leased port and that
// its lease excludes others until released.
func TestLeaseHeldUntilReleased(t *testing.T) {
	t.Parallel()
	l, err := leasePort()
	require.NoError(t, err)
	port, err := strconv.Atoi(l.port)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, port, leaseFirst, "leased port")
	assert.LessOrEqual(t, port, leaseLast, "leased port")
	assert.True(t, leasedElsewhere(t, leaseDir(), l.port), "port %s leased while its lease is held", l.port)
	require.NoError(t, l.release())
	assert.False(t, leasedElsewhere(t, leaseDir(), l.port), "port %s leased after release", l.port)
	assert.NoError(t, l.release(), "second release")
}

// TestNodeKeepsItsLease checks that a node's port stays leased while the
// node is killed, and is released when the test's cleanups have run.
func TestNodeKeepsItsLease(t *testing.T) {
	t.Parallel()
	var port string
	t.Run("node", func(t *testing.T) {
		node := Start(t, 1)[0]
		_, port, _ = net.SplitHostPort(node.Addr())
		assert.True(t, leasedElsewhere(t, leaseDir(), port), "port of a running node leased")
		node.Kill()
		assert.True(t, leasedElsewhere(t, leaseDir(), port), "port of a killed node leased")
		node.Restart()
		_, err := node.Do("PING")
		assert.NoError(t, err, "PING after Restart")
	})
	require.NotEmpty(t, port, "port of the node")
	assert.False(t, leasedElsewhere(t, leaseDir(), port), "port %s leased after the cleanups", port)
}

// TestProxyLeasesItsPort checks that a proxy listens on a leased port of
// the leased range and releases it when closed.
func TestProxyLeasesItsPort(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	var port string
	t.Run("proxy", func(t *testing.T) {
		p := NewProxy(t, node.Addr())
		_, port, _ = net.SplitHostPort(p.Addr())
		n, err := strconv.Atoi(port)
		require.NoError(t, err)
		assert.True(t, n >= leaseFirst && n <= leaseLast, "proxy port %d, want %d-%d", n, leaseFirst, leaseLast)
		assert.True(t, leasedElsewhere(t, leaseDir(), port), "port of a proxy leased")
	})
	require.NotEmpty(t, port, "port of the proxy")
	assert.False(t, leasedElsewhere(t, leaseDir(), port), "port %s leased after the proxy closed", port)
}

// TestSetUpsLeaseTheirPorts checks that a cluster's bus ports and the
// Sentinels' ports are leased.
func TestSetUpsLeaseTheirPorts(t *testing.T) {
	t.Parallel()
	t.Run("cluster bus", func(t *testing.T) {
		t.Parallel()
		for _, m := range StartCluster(t).Masters() {
			bus := m.srv.(*process).clusterBus()
			assert.True(t, leasedElsewhere(t, leaseDir(), bus), "bus port %s of %s leased", bus, m.Addr())
		}
	})
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		for _, s := range StartSentinel(t, SentinelConfig{}).Sentinels() {
			_, port, _ := net.SplitHostPort(s.Addr())
			assert.True(t, leasedElsewhere(t, leaseDir(), port), "port of Sentinel %s leased", s.Addr())
		}
	})
}

// errGone is what a test's alive function returns once it gives up.
var errGone = errors.New("gone")

// aliveFor returns an alive function for waitReady that reports the server
// gone from its nth call on.
func aliveFor(n int) func() error {
	calls := 0
	return func() error {
		calls++
		if calls >= n {
			return errGone
		}
		return nil
	}
}

// TestReadyOnlyForItsOwnServer checks that a server is ready only when
// the server answering on its port has its pid: a server started on a
// port another server holds exits, and that other's replies do not make
// it ready.
func TestReadyOnlyForItsOwnServer(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	pid, err := strconv.Atoi(infoField(t, node, "process_id"))
	require.NoError(t, err)

	err = waitReady(node.Addr(), time.Minute, aliveFor(3), pid+1)
	require.ErrorIs(t, err, errGone, "waitReady for pid %d where pid %d answers", pid+1, pid)
	assert.ErrorContains(t, err, "process_id")
	assert.NoError(t, waitReady(node.Addr(), time.Minute, aliveFor(3), pid), "waitReady for the pid that answers")

	be, err := newProcessBackend(t.TempDir)
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(node.Addr())
	dir := t.TempDir()
	p := &process{bin: be.bin, dir: dir, port: port}
	p.args = append(redisFlags(port, serverSpec{}), "--bind", "127.0.0.1", "--dir", dir, "--logfile", p.logPath())
	t.Cleanup(func() { assert.NoError(t, p.destroy()) })
	err = p.start()
	require.Error(t, err, "start on %s, where another server listens", port)
	assert.ErrorContains(t, err, "already in use", "the error carries the server's log")
}

// infoField returns one field of INFO server of node.
func infoField(t *testing.T, node *Node, field string) string {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "server"))
	require.NoError(t, err)
	v, ok := redisinfo.Fields(info)[field]
	require.True(t, ok, "INFO server of %s has no %s", node.Addr(), field)
	return v
}

// TestLeasePortForTheTest checks that LeasePort holds its port until the
// test's cleanups run.
func TestLeasePortForTheTest(t *testing.T) {
	t.Parallel()
	var port string
	t.Run("lease", func(t *testing.T) {
		port = LeasePort(t)
		assert.True(t, leasedElsewhere(t, leaseDir(), port), "port %s leased during the test", port)
	})
	require.NotEmpty(t, port, "LeasePort")
	assert.False(t, leasedElsewhere(t, leaseDir(), port), "port %s leased after the cleanups", port)
}

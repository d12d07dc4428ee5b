package redlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// startNodes starts n Redis masters and registers the goroutine-leak check
// before them, so that it runs after they are torn down.
func startNodes(t *testing.T, n int) []*redistest.Node {
	t.Helper()
	locktest.NoLeaks(t)
	return redistest.Start(t, n)
}

// poolsOf returns the nodes' pools in order.
func poolsOf(nodes []*redistest.Node) []strategy.Pool {
	pools := make([]strategy.Pool, len(nodes))
	for i, n := range nodes {
		pools[i] = n.Pool()
	}
	return pools
}

// newLocker builds a Locker over the nodes or fails the test. Its
// background calls are waited for in t.Cleanup, before the nodes are torn
// down (paused nodes are resumed first so that the wait is short), and
// then it is closed.
func newLocker(t *testing.T, nodes []*redistest.Node, cfg redlock.Config) *redlock.Locker {
	t.Helper()
	l, err := redlock.New(poolsOf(nodes), cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	t.Cleanup(func() { waitIdle(t, l) })
	return l
}

// waitIdle waits for l's background calls, for at most 10 s and four
// NodeTimeouts (each background call ends within about two, and a node's
// owed releases within two after the last one paid).
func waitIdle(t *testing.T, l *redlock.Locker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+4*l.Config().NodeTimeout)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Errorf("Wait() = %v, want nil", err)
	}
}

// value returns the string stored at key on node, or "" when there is none
// (or the node does not answer).
func value(t *testing.T, node *redistest.Node, key string) string {
	t.Helper()
	v, err := redis.String(node.Do("GET", key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		t.Errorf("GET %s on %s = %v, want a reply", key, node.Addr(), err)
	}
	return v
}

// values returns value(key) on every node.
func values(t *testing.T, nodes []*redistest.Node, key string) []string {
	t.Helper()
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = value(t, n, key)
	}
	return out
}

// wantValues fails the test unless key holds want[i] on nodes[i] ("" for no
// key).
func wantValues(t *testing.T, nodes []*redistest.Node, key string, want []string) {
	t.Helper()
	got := values(t, nodes, key)
	for i := range nodes {
		if got[i] != want[i] {
			t.Errorf("GET %s on node %d = %q, want %q (all nodes: %q)", key, i, got[i], want[i], got)
			return
		}
	}
}

// repeat returns n copies of s.
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// lockWithin calls Lock with a context that ends after d.
func lockWithin(l strategy.Locker, key string, d time.Duration) (strategy.Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.Lock(ctx, key)
}

// mustLock takes key within 5 s or fails the test.
func mustLock(t *testing.T, l strategy.Locker, key string) strategy.Lease {
	t.Helper()
	lease, err := lockWithin(l, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Lock(%q) = %v, want nil", key, err)
	}
	return lease
}

// holds reports whether lease is still within its validity.
func holds(lease strategy.Lease) bool { return time.Now().Before(lease.Deadline()) }

// patient is the NodeTimeout of tests that are not about timeouts: the
// machines that run the tests are shared and loaded, and a 50 ms timeout
// can fire there on a healthy node.
const patient = 2 * time.Second

// calls returns how many times node ran cmd since its statistics were last
// reset (CONFIG RESETSTAT), from INFO commandstats; cmd is lower case, with
// "|" before a subcommand (e.g. "client|getname").
func calls(t *testing.T, node *redistest.Node, cmd string) int {
	t.Helper()
	return callsOf(t, node, cmd)[0]
}

// callsOf is calls for several commands, read from one INFO reply so that
// the counts are taken at the same moment.
func callsOf(t *testing.T, node *redistest.Node, cmds ...string) []int {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatalf("INFO commandstats on %s = %v, want a reply", node.Addr(), err)
	}
	out := make([]int, len(cmds))
	for line := range strings.Lines(info) {
		for i, cmd := range cmds {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
			if !ok {
				continue
			}
			if out[i], err = strconv.Atoi(rest[:strings.IndexByte(rest+",", ',')]); err != nil {
				t.Fatalf("INFO commandstats line %q: %v", line, err)
			}
		}
	}
	return out
}

// resetStats clears the command statistics of every node.
func resetStats(t *testing.T, nodes []*redistest.Node) {
	t.Helper()
	for _, n := range nodes {
		if _, err := n.Do("CONFIG", "RESETSTAT"); err != nil {
			t.Fatalf("CONFIG RESETSTAT on %s = %v, want nil", n.Addr(), err)
		}
	}
}

// alignFences sets the fencing counter of the lock name to 1 on every
// node, as on a key whose counters are in step: a new key's counters are
// made from each node's clock, which differ, so its first acquires raise
// them in a second round (the write-back).
func alignFences(t *testing.T, nodes []*redistest.Node, name string) {
	t.Helper()
	for i, n := range nodes {
		if _, err := n.Do("SET", redlock.FenceKey(protocol.LockKey("lock:", name)), 1, "PX", time.Hour.Milliseconds()); err != nil {
			t.Fatalf("SET counter on node %d = %v, want nil", i, err)
		}
	}
}

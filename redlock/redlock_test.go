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

// TestConformance runs the shared kit on a one-node Redlock (Quorum 1 of
// 1), which must behave like a correct single-node lock. The node timeout
// is patient (see patient); the frozen-node checks still need every call
// to end with its context.
func TestConformance(t *testing.T) {
	locktest.Conformance(t, func(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
		return redlock.New([]strategy.Pool{pool}, redlock.Config{Config: cfg, NodeTimeout: patient})
	})
}

func TestProperties(t *testing.T) {
	locktest.NoLeaks(t)
	l, err := redlock.New([]strategy.Pool{&redis.Pool{}, &redis.Pool{}, &redis.Pool{}}, redlock.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "redlock", MutualExclusion: true, AtomicAcquire: true, OwnerSafeRelease: true, NodeFaultTolerant: true,
		Fencing: true, AcquireRoundTrips: 1, ReleaseRoundTrips: 1,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// TestContention runs 32 workers x 200 increments of a counter kept on node
// 0 under a 5-node Redlock: the counter must be exact and no two holders
// may overlap.
func TestContention(t *testing.T) {
	nodes := startNodes(t, 5)
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	locktest.Contention(t, l, nodes[0].Pool(), "contended", 32, 200)
}

// TestRedisState checks what a lease writes on every node: its token under
// the prefixed key with a millisecond TTL that Extend pushes out, and
// nothing left after Unlock.
func TestRedisState(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: 2 * time.Second, Prefix: "p:"}})
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	waitIdle(t, l) // the nodes the decision did not wait for
	wantValues(t, nodes, protocol.LockKey("p:", "k"), repeat(lease.Token(), 5))
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	waitIdle(t, l)
	for i, n := range nodes {
		if ms, err := redis.Int64(n.Do("PTTL", protocol.LockKey("p:", "k"))); err != nil || ms <= 20000 {
			t.Errorf("PTTL p:k on node %d after Extend(30s) = %d, %v; want > 20000", i, ms, err)
		}
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("p:", "k"), repeat("", 5))
	if err := lease.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("second Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
}

// TestTryLockHeldElsewhere checks the refusal: a key held on a majority of
// nodes by another owner gives ErrNotAcquired, and the nodes this attempt
// did lock are released.
func TestTryLockHeldElsewhere(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	for _, n := range nodes[:3] {
		if _, err := n.Do("SET", protocol.LockKey("lock:", "k"), "other", "PX", 60000); err != nil {
			t.Fatalf("SET on %s = %v, want nil", n.Addr(), err)
		}
	}
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock() = %v, want %v", err, strategy.ErrNotAcquired)
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), []string{"other", "other", "other", "", ""})
}

// TestUnlockNotHeld checks that Unlock and Extend report ErrNotHeld once a
// majority of nodes no longer hold the lease's token.
func TestUnlockNotHeld(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	lease := mustLock(t, l, "k")
	waitIdle(t, l)
	for _, n := range nodes[:3] {
		if _, err := n.Do("SET", protocol.LockKey("lock:", "k"), "thief"); err != nil {
			t.Fatalf("SET on %s = %v, want nil", n.Addr(), err)
		}
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Extend() = %v, want %v", err, strategy.ErrNotHeld)
	}
	if err := lease.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), []string{"thief", "thief", "thief", "", ""})
}

// TestNoScriptFallback: after SCRIPT FLUSH on every node, Lock and Unlock
// still work; every EVALSHA refused with NOSCRIPT is followed by exactly
// one EVAL (which loads the script as it runs it), never by a second
// EVALSHA, and afterwards the scripts are cached again.
func TestNoScriptFallback(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	alignFences(t, nodes, "k")  // no write-back round: only the acquire and release scripts run
	warm := mustLock(t, l, "k") // connections named, run_ids known
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	for _, n := range nodes {
		if _, err := n.Do("SCRIPT", "FLUSH"); err != nil {
			t.Fatalf("SCRIPT FLUSH on %s = %v, want nil", n.Addr(), err)
		}
	}
	resetStats(t, nodes)
	pair := func() {
		t.Helper()
		lease, err := l.TryLock(ctx, "k")
		if err != nil {
			t.Fatalf("TryLock() after SCRIPT FLUSH = %v, want nil", err)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock() after SCRIPT FLUSH = %v, want nil", err)
		}
		waitIdle(t, l)
	}
	pair()
	for i, n := range nodes {
		refused := stat(t, n, "evalsha", "failed_calls")
		evals := stat(t, n, "eval", "calls")
		if refused == 0 || evals != refused {
			t.Errorf("node %d: %d EVALSHAs refused with NOSCRIPT and %d EVALs, want one EVAL for each refusal (at least one)", i, refused, evals)
		}
	}
	resetStats(t, nodes)
	pair()
	for i, n := range nodes {
		if got := stat(t, n, "evalsha", "failed_calls") + stat(t, n, "eval", "calls"); got != 0 {
			t.Errorf("node %d: %d NOSCRIPT refusals and EVALs once the scripts were loaded again, want 0", i, got)
		}
	}
}

// stat returns one field of node's INFO commandstats line for cmd (e.g.
// "failed_calls"), 0 when cmd has not run since CONFIG RESETSTAT.
func stat(t *testing.T, node *redistest.Node, cmd, field string) int {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatalf("INFO commandstats on %s = %v, want a reply", node.Addr(), err)
	}
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
		if !ok {
			continue
		}
		for kv := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(kv, field+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("INFO commandstats line %q: %v", line, err)
				}
				return n
			}
		}
	}
	return 0
}

package redlock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// restartScenario sets up the Redis documentation's case: lease A holds
// nodes 0-2 of 5 (nodes 3 and 4 were down when it locked, and came back
// empty), then node 2 restarts without its data. A and B are two leases of
// one Locker: the guard is per Locker.
func restartScenario(t *testing.T, guard bool, ttl time.Duration) ([]*redistest.Node, *redlock.Locker, strategy.Lease) {
	t.Helper()
	nodes := startNodes(t, 5)
	l := newLocker(t, nodes, redlock.Config{
		NodeTimeout:         patient,
		DriftFactor:         0.05,
		DisableRestartGuard: !guard,
		Config:              strategy.Config{TTL: ttl},
	})
	nodes[3].Kill()
	nodes[4].Kill()
	a := mustLock(t, l, "res")
	nodes[3].Restart()
	nodes[4].Restart()
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "res"), []string{a.Token(), a.Token(), a.Token(), "", ""})
	nodes[2].Restart()
	return nodes, l, a
}

// TestRestartWithoutPersistence shows what a node restarted without its
// data does to Redlock, and that the restart guard prevents it.
func TestRestartWithoutPersistence(t *testing.T) {
	t.Run("guard off: two holders", func(t *testing.T) {
		nodes, l, a := restartScenario(t, false, 10*time.Second)
		b, err := lockWithin(l, "res", time.Second)
		if err != nil {
			t.Fatalf("B Lock() = %v, want nil (nodes 2-4 are free)", err)
		}
		if !holds(a) || !holds(b) {
			t.Errorf("A holds %v, B holds %v; want both at once", holds(a), holds(b))
		}
		waitIdle(t, l)
		wantValues(t, nodes, protocol.LockKey("lock:", "res"), []string{a.Token(), a.Token(), b.Token(), b.Token(), b.Token()})
	})
	t.Run("guard on: refused until A expired", func(t *testing.T) {
		const ttl = 2 * time.Second
		nodes, l, a := restartScenario(t, true, ttl)
		_, err := l.TryLock(context.Background(), "res")
		if !errors.Is(err, strategy.ErrNotAcquired) || !strings.Contains(err.Error(), "restart guard") {
			t.Fatalf("B TryLock() = %v, want %v from the restart guard", err, strategy.ErrNotAcquired)
		}
		if _, err := lockWithin(l, "res", ttl/4); !errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("B Lock() for a quarter of the TTL = %v, want %v", err, strategy.ErrNotAcquired)
		}
		waitIdle(t, l)
		wantValues(t, nodes, protocol.LockKey("lock:", "res"), []string{a.Token(), a.Token(), "", "", ""})

		b, err := lockWithin(l, "res", 5*ttl)
		if err != nil {
			t.Fatalf("B Lock() = %v, want nil once A expired", err)
		}
		// B's attempt began no earlier than Deadline - (TTL - drift): after
		// A's lease ended.
		drift := time.Duration(float64(ttl)*l.Config().DriftFactor) + redlock.DriftFloor
		if began := b.Deadline().Add(-(ttl - drift)); began.Before(a.Deadline()) {
			t.Errorf("B's lease began by %v, before A's deadline %v", began, a.Deadline())
		}
		if err := b.Unlock(context.Background()); err != nil {
			t.Errorf("B Unlock() = %v, want nil", err)
		}
	})
}

// TestRestartGuardExcludesForOneTTL restarts a majority of the nodes a
// Locker knows: it refuses every lock until one TTL after it saw them
// again, then counts them, and keeps checking only new connections. A
// Locker created after the restart knows nothing to compare and is not
// protected.
func TestRestartGuardExcludesForOneTTL(t *testing.T) {
	const ttl = time.Second
	nodes := startNodes(t, 5)
	ctx := context.Background()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: ttl}})
	warm := mustLock(t, l, "warm")
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l) // every node's run_id is known
	for _, n := range nodes[:3] {
		n.Restart()
	}

	seen := time.Now()
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) || !strings.Contains(err.Error(), "restart guard") {
		t.Fatalf("TryLock() after 3 of 5 nodes restarted = %v, want %v from the restart guard", err, strategy.ErrNotAcquired)
	}
	fresh := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: ttl}})
	unguarded, err := fresh.TryLock(ctx, "fresh")
	if err != nil {
		t.Errorf("TryLock() by a Locker created after the restart = %v, want nil (it has nothing to compare)", err)
	} else if err := unguarded.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}

	lease, err := lockWithin(l, "k", 10*ttl)
	if err != nil {
		t.Fatalf("Lock() = %v, want nil once the exclusion ended", err)
	}
	if waited := time.Since(seen); waited < ttl {
		t.Errorf("Lock() succeeded %v after the restarted nodes were seen, want at least the TTL %v", waited, ttl)
	}
	// The token is "<waiter>.<attempt>". Every refused round is undone on
	// the nodes that said yes, and the undo must not wake its own waiter:
	// waits of 4 ms growing to 64 ms allow about 20 attempts in one TTL,
	// a waiter woken by its own undos makes hundreds.
	tok := lease.Token()
	if n, err := strconv.Atoi(tok[strings.LastIndexByte(tok, '.')+1:]); err != nil || n > 100 {
		t.Errorf("Lock() took attempt %q to get the lock, want at most 100 attempts in one TTL", tok)
	}
	waitIdle(t, l)
	waitIdle(t, fresh)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), repeat(lease.Token(), 5))

	// Hot path: known connections cost one round trip, without INFO. (The
	// Lock above waited; its notice connections, unnamed, go back to the
	// pool only notify.Linger after it returned.)
	resetStats(t, nodes)
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	for i, n := range nodes {
		if got := calls(t, n, "info"); got != 0 {
			t.Errorf("INFO calls on node %d during Unlock = %d, want 0", i, got)
		}
		if got := calls(t, n, "client|getname"); got != 1 {
			t.Errorf("CLIENT GETNAME calls on node %d during Unlock = %d, want 1 (pipelined with the script)", i, got)
		}
	}
}

// failOneGet is a pool that fails its fail-th GetContext (counting from
// 1) with locktest.ErrInjected and lends the others from pool.
type failOneGet struct {
	pool strategy.Pool
	gets atomic.Int64
	fail int64
}

func (p *failOneGet) GetContext(ctx context.Context) (redis.Conn, error) {
	if p.gets.Add(1) == p.fail {
		return nil, locktest.ErrInjected
	}
	return p.pool.GetContext(ctx)
}

// checkFailsOnNode0 returns a Locker over nodes whose restart guard
// cannot check node 0's first connection: the guard sends CLIENT GETNAME
// together with the first command, and checks a connection it finds new
// (INFO server, CLIENT SETNAME) after both replied; node 0's pool then
// fails the check's connection. The scripts are loaded first (by another
// Locker), so that the first command runs at once.
func checkFailsOnNode0(t *testing.T, nodes []*redistest.Node) *redlock.Locker {
	t.Helper()
	warm := newLocker(t, nodes, redlock.Config{NodeTimeout: patient})
	if err := mustLock(t, warm, "warm").Unlock(context.Background()); err != nil {
		t.Fatalf("Unlock(warm) = %v, want nil", err)
	}
	pools := poolsOf(nodes)
	// The 1st lends the command's connection, the 2nd is the check's.
	pools[0] = &failOneGet{pool: nodes[0].NewPool(), fail: 2}
	l, err := redlock.New(pools, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: 30 * time.Second}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// holdOn sets key to "someone else" on nodes, for 30 s.
func holdOn(t *testing.T, nodes []*redistest.Node, key string) {
	t.Helper()
	for _, n := range nodes {
		if _, err := n.Do("SET", key, "someone else", "PX", 30000); err != nil {
			t.Fatalf("SET %s on %s = %v, want nil", key, n.Addr(), err)
		}
	}
}

// TestGuardCheckFailsAfterTheAcquireRan: when the restart guard's check
// of a new connection cannot even be sent, the acquire script sent before
// it has run all the same: the SET it made must be taken back when the
// round fails, not read as a command that was never sent and left until
// its TTL (as killed connections once left it, in
// TestSharedNodeConnectionKilled).
func TestGuardCheckFailsAfterTheAcquireRan(t *testing.T) {
	nodes := startNodes(t, 3)
	l := checkFailsOnNode0(t, nodes)
	key := protocol.LockKey("lock:", "k")
	holdOn(t, nodes[1:], key)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if lease, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock(k) = %v, %v, want an error wrapping ErrNotAcquired (nodes 1 and 2 are held)", lease, err)
	}
	waitIdle(t, l)
	wantValues(t, nodes, key, []string{"", "someone else", "someone else"})
}

// TestLostRefusalLeavesTheLine: a Lock whose round wins on nodes 1 and 2
// while node 0, held by someone else, queued it in its line but the
// answer was lost (here the restart guard's check failed after the
// script ran) takes itself out of node 0's line, as it does where a
// refusal came back: left there, it would head the line when the lock
// is free, keep the lock from the others for up to LineListened and could
// be handed node 0's copy, which nobody would release.
func TestLostRefusalLeavesTheLine(t *testing.T) {
	nodes := startNodes(t, 3)
	l := checkFailsOnNode0(t, nodes)
	key := protocol.LockKey("lock:", "k")
	holdOn(t, nodes[:1], key)
	lease := mustLock(t, l, "k")
	waitIdle(t, l) // node 0's answer came (and the check failed) before the Unlock
	if err := lease.Unlock(context.Background()); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	line := protocol.KeysOf(key).Line
	if n, err := redis.Int(nodes[0].Do("ZCARD", line)); err != nil || n != 0 {
		t.Errorf("ZCARD %s on node 0 = %d, %v, want 0 (the winner left the line)", line, n, err)
	}
}

package redlock

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// holdFirst is a fault hook that holds back the first request of the
// Lock call to each of the given nodes (before it is sent) until release
// is called; later requests to those nodes, and every request to the other
// nodes, pass. held is closed once every given node's first request is
// held back, and retried once a request reaches node 0 a second time: the
// first attempt was decided, since a Lock call makes one attempt at a time.
type holdFirst struct {
	mu      sync.Mutex
	pending map[string]bool // points whose first request is not held yet
	node0   int             // requests that reached node 0
	held    chan struct{}
	retried chan struct{}
	open    chan struct{}
	release func()
}

func newHoldFirst(nodes ...int) *holdFirst {
	h := &holdFirst{pending: map[string]bool{}, held: make(chan struct{}), retried: make(chan struct{}), open: make(chan struct{})}
	for _, i := range nodes {
		h.pending[pointAcquireOn(i)] = true
	}
	h.release = sync.OnceFunc(func() { close(h.open) })
	return h
}

func (h *holdFirst) hook(ctx context.Context, point string) error {
	h.mu.Lock()
	if point == pointAcquireOn(0) {
		if h.node0++; h.node0 == 2 {
			close(h.retried)
		}
	}
	first := h.pending[point]
	if first {
		delete(h.pending, point)
		if len(h.pending) == 0 {
			close(h.held)
		}
	}
	h.mu.Unlock()
	if !first {
		return nil
	}
	select {
	case <-h.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestLateAttemptLeavesLaterAttemptAlone: the CI failure of
// TestConfinedACLUser/redlock under load ("Unlock found its token on 2 of
// 5 nodes", lost updates), replayed step by step. A Lock call's first
// attempt is refused by nodes 0-2 (someone else holds them) while its
// requests to nodes 3 and 4 are still on their way (a loaded machine: a
// goroutine not yet run, a connection still being dialled). Nodes 0 and 1
// are freed and a later attempt of the same call wins on nodes 0, 1, 3 and
// 4. Only then do the first attempt's requests reach nodes 3 and 4. They
// must leave the later attempt's lock alone: the acquire script takes over
// only an earlier attempt's key. Taking it over there (and the failed
// attempt's undo then deleting it) left the lease on nodes 0 and 1 only,
// no longer a quorum, so that a third party could take nodes 2-4 while the
// lease was within its validity.
func TestLateAttemptLeavesLaterAttemptAlone(t *testing.T) {
	nodes, l, wait := startLocker(t, 5, Config{NodeTimeout: 5 * time.Second, Config: strategy.Config{TTL: time.Minute}})
	key := protocol.LockKey("lock:", "k")
	for _, n := range nodes[:3] {
		if _, err := n.Do("SET", key, "someone-else", "PX", time.Minute.Milliseconds()); err != nil {
			t.Fatalf("SET %s = %v, want nil", key, err)
		}
	}

	hold := newHoldFirst(3, 4)
	t.Cleanup(hold.release)
	type result struct {
		lease strategy.Lease
		err   error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lease, err := l.Lock(fault.With(ctx, hold.hook), "k")
		done <- result{lease, err}
	}()
	for _, ch := range []chan struct{}{hold.held, hold.retried} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("the first attempt was not refused while its requests to nodes 3 and 4 were held back")
		}
	}
	for _, n := range nodes[:2] {
		if _, err := n.Do("DEL", key); err != nil {
			t.Fatalf("DEL %s = %v, want nil", key, err)
		}
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Lock() did not return once nodes 0, 1, 3 and 4 were free")
	}
	if res.err != nil {
		t.Fatalf("Lock() = %v, want nil (nodes 0, 1, 3 and 4 are free)", res.err)
	}
	token := res.lease.Token()
	hold.release() // the first attempt's requests reach nodes 3 and 4 only now
	wait()
	// Nodes 0 and 1 may have refused the winning attempt if its request
	// reached them before the DEL (it won with nodes 1, 3 and 4, say);
	// nodes 3 and 4 granted every attempt after the first.
	held := 0
	for i, n := range nodes {
		got := get(t, n, key)
		switch {
		case got == token:
			held++
		case i == 2 && got == "someone-else", i < 2 && got == "":
		default:
			t.Errorf("GET %s on node %d = %q after the first attempt's late requests, want %q (the lease's token)", key, i, got, token)
		}
	}
	if held < 3 {
		t.Errorf("the lease's token is on %d of 5 nodes after the first attempt's late requests, want a quorum (3)", held)
	}
	if err := res.lease.Unlock(context.Background()); err != nil {
		t.Errorf("Unlock() = %v, want nil (the lease holds nodes 0, 1, 3 and 4)", err)
	}
}

// TestAcquireDeletesOwnReleasedLock: Unlock returns once a quorum deleted
// the lock, and a Lock of the same key that follows at once can reach a
// node before the release does. There it must not be refused by the lock
// just released (which would leave the node's fencing counter behind and
// the waiter in the node's line): the acquire script deletes the released
// lock first. Node 4's release is held back until the second Lock's
// request has been processed there.
func TestAcquireDeletesOwnReleasedLock(t *testing.T) {
	nodes, l, wait := startLocker(t, 5, Config{NodeTimeout: 5 * time.Second, Config: strategy.Config{TTL: time.Minute}})
	k := protocol.KeysOf(protocol.LockKey("lock:", "k"))
	ctx := context.Background()
	for i, n := range nodes { // counters in step, as on a key in use
		if _, err := n.Do("SET", k.Fence, 1, "PX", time.Hour.Milliseconds()); err != nil {
			t.Fatalf("SET %s on node %d = %v, want nil", k.Fence, i, err)
		}
	}
	first, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("Lock() = %v, want nil", err)
	}
	wait() // every node holds the first lock
	gate := fault.NewGate(pointReleaseOn(4))
	t.Cleanup(gate.Open)
	if err := first.Unlock(fault.With(ctx, gate.Hook)); err != nil {
		t.Fatalf("Unlock() = %v, want nil (nodes 0-3 are a quorum)", err)
	}
	second, err := l.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("second Lock() = %v, want nil", err)
	}
	// Wait until node 4 has processed the second acquire: it holds the
	// second lock, or it refused and queued the waiter.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		queued, err := redis.Int(nodes[4].Do("ZCARD", k.Line))
		if err != nil {
			t.Fatalf("ZCARD %s = %v, want a reply", k.Line, err)
		}
		if get(t, nodes[4], k.Lock) == second.Token() || queued > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 4 never processed the second acquire")
		}
	}
	gate.Open() // the first release reaches node 4 only now
	wait()
	for i, n := range nodes {
		if got := get(t, n, k.Lock); got != second.Token() {
			t.Errorf("GET %s on node %d = %q, want the second lease's token %q", k.Lock, i, got, second.Token())
		}
		if got := get(t, n, k.Fence); got != strconv.FormatUint(second.Fence(), 10) {
			t.Errorf("GET %s on node %d = %q, want the second lease's fence %d (counters in step)", k.Fence, i, got, second.Fence())
		}
	}
	if err := second.Unlock(ctx); err != nil {
		t.Errorf("second Unlock() = %v, want nil", err)
	}
}

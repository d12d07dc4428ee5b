package redlock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/redlock"
)

// TestReleaseHandsOffAcrossLockers: A holds "k" on 5 nodes whose counters
// are in step, and B, in another Locker, waits in line. A's Unlock hands
// each node's copy to B, and B's Lock returns on the nodes' notices alone:
// no acquire round (the nodes ran A's release and, at most, the leave of
// the nodes B did not count, 7 scripts, where an acquire round adds 5),
// the Observer reports a hand-off that was not local, B's fence is above
// A's and a quorum of nodes holds B's name. B's Unlock leaves nothing.
func TestReleaseHandsOffAcrossLockers(t *testing.T) {
	nodes := startNodes(t, 5)
	alignFences(t, nodes, "k")
	rec := &locktest.Recorder{}
	la := newLocker(t, nodes, passConfig())
	cfg := passConfig()
	cfg.Observer = rec
	lb := newLocker(t, nodes, cfg)
	a := mustHoldAll(t, nodes, la, "k")
	done := lockAsync(lb, "k", time.Minute)
	waitQueued(t, nodes, 1, len(nodes))
	waitSubscribed(t, nodes, protocol.LockKey("lock:", "k"))

	resetStats(t, nodes)
	b := handOver(t, a, done)
	scripts := 0
	for _, n := range nodes {
		scripts += calls(t, n, "evalsha")
	}
	if maxScripts := len(nodes) + len(nodes) - 3; scripts > maxScripts {
		t.Errorf("scripts the nodes ran from A's Unlock to B's Lock returning = %d, want at most %d (no acquire round)", scripts, maxScripts)
	}
	if b.Fence() <= a.Fence() {
		t.Errorf("B's Fence() = %d, want above A's %d", b.Fence(), a.Fence())
	}
	held := 0
	for _, v := range values(t, nodes, protocol.LockKey("lock:", "k")) {
		if v == b.Token() {
			held++
		}
	}
	if held < 3 {
		t.Errorf("nodes holding B's token %q = %d, want at least the quorum 3", b.Token(), held)
	}
	if got := locktest.Kinds(rec.For("k")); got != "handed-off acquired" {
		t.Errorf("B's Observer heard %q, want %q (%s)", got, "handed-off acquired", rec)
	} else if e := rec.For("k")[0].HandedOff; e.Local {
		t.Errorf("B's hand-off event = %+v, want Local false (a release in Redis)", e)
	}
	if err := b.Unlock(context.Background()); err != nil {
		t.Errorf("B's Unlock() = %v, want nil", err)
	}
	waitIdle(t, lb)
	for _, n := range nodes {
		locktest.AssertReleased(t, n, "*lock:*", time.Minute)
	}
}

// TestStaleHandOffNoticeIgnored: a hand-off notice whose fencing token is
// no larger than the counter a node reported when it refused the waiter
// came before that refusal, so it does not count: B, waiting behind A,
// hears such a notice from every node and keeps waiting while A holds the
// lock; A's Unlock then hands it over.
func TestStaleHandOffNoticeIgnored(t *testing.T) {
	nodes := startNodes(t, 3)
	la := newLocker(t, nodes, passConfig())
	lb := newLocker(t, nodes, passConfig())
	a := mustHoldAll(t, nodes, la, "k")
	done := lockAsync(lb, "k", time.Minute)
	waitQueued(t, nodes, 1, len(nodes))
	rkey := protocol.LockKey("lock:", "k")
	waitSubscribed(t, nodes, rkey)

	for i, n := range nodes {
		head, err := redis.Strings(n.Do("ZRANGE", passLine, 0, 0))
		if err != nil || len(head) != 1 {
			t.Fatalf("ZRANGE line on node %d = %q, %v; want B", i, head, err)
		}
		m, err := protocol.ParseMember(head[0])
		if err != nil {
			t.Fatalf("line member on node %d: %v", i, err)
		}
		counter, err := redis.Uint64(n.Do("GET", redlock.FenceKey(rkey)))
		if err != nil {
			t.Fatalf("GET counter on node %d = %v", i, err)
		}
		notice := protocol.Notice{HandOff: true, Fence: counter, Waiter: m.Waiter}.String()
		if _, err := n.Do("PUBLISH", protocol.Inbox(rkey, m.Locker), notice); err != nil {
			t.Fatalf("PUBLISH on node %d = %v", i, err)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("B's Lock() = %v, %v while A holds the lock, after hand-off notices from before B's refusals; want it to wait", r.lease, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	b := handOver(t, a, done)
	if b.Fence() <= a.Fence() {
		t.Errorf("B's Fence() = %d, want above A's %d", b.Fence(), a.Fence())
	}
	if err := b.Unlock(context.Background()); err != nil {
		t.Errorf("B's Unlock() = %v, want nil", err)
	}
}

// TestHandOffToAWaiterThatGivesUp: B waits behind A, and B's Lock gives up
// as A's Unlock hands B the lock: whichever comes first, the copies handed
// to B are passed on (B's Abandon, or its Locker hearing of hand-offs to a
// Lock call that no longer waits), so C takes the lock well within the
// 60 s TTL, 20 times over, and nothing is left once all are closed.
func TestHandOffToAWaiterThatGivesUp(t *testing.T) {
	nodes := startNodes(t, 3)
	la := newLocker(t, nodes, passConfig())
	lb := newLocker(t, nodes, passConfig())
	lc := newLocker(t, nodes, passConfig())
	for i := range 20 {
		key := fmt.Sprintf("gone:%d", i)
		a := mustLock(t, la, key)
		ctx, cancel := context.WithCancel(context.Background())
		bDone := make(chan error, 1)
		go func() {
			lease, err := lb.Lock(ctx, key)
			if err == nil {
				err = lease.Unlock(context.Background())
			}
			bDone <- err
		}()
		waitQueuedFor(t, nodes, key, 1, len(nodes))
		var wg sync.WaitGroup
		wg.Go(cancel)
		wg.Go(func() {
			if err := a.Unlock(context.Background()); err != nil {
				t.Errorf("%s: A's Unlock() = %v, want nil", key, err)
			}
		})
		wg.Wait()
		<-bDone // B gave up, or took the lock and released it
		c, err := lockWithin(lc, key, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: C's Lock() = %v after B gave up, want the lock within 5 s (TTL 60 s)", key, err)
		}
		if err := c.Unlock(context.Background()); err != nil {
			t.Errorf("%s: C's Unlock() = %v, want nil", key, err)
		}
	}
	for _, l := range []*redlock.Locker{la, lb, lc} {
		if err := l.Close(); err != nil {
			t.Errorf("Close() = %v, want nil", err)
		}
	}
	for _, n := range nodes {
		locktest.AssertUnlocked(t, n, "*gone:*", time.Minute)
	}
}

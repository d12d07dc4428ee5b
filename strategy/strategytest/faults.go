package strategytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/fencing"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// nodeFault: on one node, the primary dies after granting A the lock but
// before its replica received it, and the replica is promoted; on several
// nodes, a minority of them is lost and comes back empty. Either way B then
// tries the lock A still holds. A Locker that waits for its replicas
// (Config.Replicas) cannot be granted the lock while the replica is cut
// off: its refusal (strategy.ErrNotReplicated) is recorded, the replica
// comes back, and A locks again, acknowledged, before the primary dies.
func nodeFault(ctx context.Context, e *env, r *Result) {
	r.Attempts = 1
	if len(e.nodes) > 1 {
		minorityLost(ctx, e, r)
		return
	}
	primary := e.nodes[0]
	var replica *redistest.Node
	if len(e.replicas) > 0 && len(e.replicas[0]) > 0 {
		replica = e.replicas[0][0] // the target's own (Target.Replicas)
	} else {
		replica = primary.StartReplica()
	}
	la, err := e.locker(strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		fail(r, "build", err)
		return
	}
	// Freeze the replica and cut its link, so that A's SET never reaches it
	// (data already in flight would otherwise arrive when it resumes).
	replica.Pause()
	e.rec.note("", "a replica of the primary runs; it is frozen and its link cut, so nothing more reaches it")
	if _, err := e.do(ctx, 0, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		replica.Resume()
		fail(r, "cut the replication link", err)
		return
	}
	ctxB := as(ctx, "B")
	a, err := lockWithin(as(ctx, "A"), la, "failover")
	acked := ""
	if errors.Is(err, strategy.ErrNotReplicated) {
		a, acked, err = lockAcknowledged(ctx, e, la, replica)
	}
	if err != nil {
		replica.Resume()
		fail(r, "A Lock", err)
		return
	}
	tA := time.Now()
	primary.Kill()
	replica.Resume()
	replica.Promote()
	if acked != "" {
		e.rec.note("", "the primary dies; the replica, which acknowledged A's lock, is promoted")
	} else {
		e.rec.note("", "the primary dies; the replica, which never got A's lock, is promoted")
	}
	lb, err := e.build([]strategy.Pool{e.traced(replica.Pool(), "replica")}, strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		fail(r, "build on the replica", err)
		return
	}
	b, err := probe(ctxB, lb, "failover")
	switch {
	case err == nil:
		tl := newTimeline()
		tl.hold("A", tA, a.Deadline())
		tl.hold("B", time.Now(), b.Deadline())
		r.Violations = 1
		r.Account = acked + "the primary died before replicating A's lock; on the promoted replica " + tl.overlaps()[0].describe("failover")
		_ = b.Unlock(ctxB)
	case errors.Is(err, strategy.ErrNotAcquired):
		r.Account = acked + "after failover to the replica, B was refused A's lock"
	default:
		fail(r, "B TryLock", err)
	}
}

// lockAcknowledged follows A's Lock that its frozen, cut-off replica did
// not acknowledge: no lock may be left on the primary; the replica thaws
// and its link comes back; A locks again, acknowledged this time. It
// returns A's lease and the account's opening.
func lockAcknowledged(ctx context.Context, e *env, la strategy.Locker, replica *redistest.Node) (strategy.Lease, string, error) {
	if v, err := e.lockValue(ctx, 0, "failover"); err != nil || v != "" {
		replica.Resume()
		return nil, "", fmt.Errorf("A's Lock was not acknowledged (ErrNotReplicated), yet the primary holds the lock %q (%v)", v, err)
	}
	e.rec.note("A", "A's Lock was refused: the frozen replica did not acknowledge it (WAIT), and the lock was taken back")
	replica.Resume()
	replica.Follow(e.nodes[0])
	e.rec.note("", "the replica thaws and its link comes back")
	// A replica that has just caught up may still be slow to acknowledge
	// on a loaded machine: A tries again while it is not acknowledged.
	deadline := time.Now().Add(waitBound)
	a, err := lockWithin(as(ctx, "A"), la, "failover")
	for errors.Is(err, strategy.ErrNotReplicated) && time.Now().Before(deadline) {
		a, err = lockWithin(as(ctx, "A"), la, "failover")
	}
	if err != nil {
		return nil, "", err
	}
	return a, "A's first Lock was refused while its replica was cut off (not acknowledged); its second, acknowledged, was granted; ", nil
}

// minorityAttempts is how often minorityLost's A locks before it gives up
// on holding the lock on every node.
const minorityAttempts = 3

// minorityLost: A holds the lock on every node; a minority of nodes dies and
// restarts empty; B must still be refused.
func minorityLost(ctx context.Context, e *env, r *Result) {
	n := len(e.nodes)
	lost := e.nodes[n/2+1:]
	const ttl = 10 * time.Second
	la, err := e.locker(strategy.Config{TTL: ttl})
	if err != nil {
		fail(r, "build", err)
		return
	}
	ctxA, ctxB := as(ctx, "A"), as(ctx, "B")
	// Redlock answers once a quorum said yes; the slower nodes' SETs land
	// a moment later, or, on a loaded machine, run past the node timeout
	// and are taken back. The scenario is "A holds the lock everywhere,
	// then a minority is lost", so A waits for them, and locks again when
	// a node never got its lock.
	var a strategy.Lease
	for attempt := 1; ; attempt++ {
		if a, err = lockWithin(ctxA, la, "minority"); err != nil {
			fail(r, "A Lock", err)
			return
		}
		err = heldEverywhere(ctx, e, "minority", a.Token(), ttl/4)
		if err == nil {
			break
		}
		if attempt == minorityAttempts {
			fail(r, "A's lock on every node", fmt.Errorf("%d attempts, the last: %w", attempt, err))
			return
		}
		if err := a.Unlock(ctxA); err != nil && !errors.Is(err, strategy.ErrNotHeld) {
			fail(r, "A Unlock after a lock that missed a node", err)
			return
		}
	}
	for _, node := range lost {
		node.Kill()
		node.Restart()
	}
	e.rec.note("", "nodes %d-%d die and restart empty", n/2+2, n)
	lb, err := e.locker(strategy.Config{TTL: ttl})
	if err != nil {
		fail(r, "build", err)
		return
	}
	b, err := probe(ctxB, lb, "minority")
	switch {
	case err == nil:
		r.Violations = 1
		r.Account = fmt.Sprintf("%d of %d nodes restarted empty and B took A's live lock", len(lost), n)
		_ = b.Unlock(ctxB)
	case errors.Is(err, strategy.ErrNotAcquired):
		r.Account = fmt.Sprintf("%d of %d nodes restarted empty; B was refused A's lock", len(lost), n)
		_ = a.Unlock(ctxA)
	default:
		fail(r, "B TryLock", err)
	}
}

// fencingScenario: A takes the lock and pauses past its TTL; B takes the
// lock and writes to a resource that checks fencing tokens; A wakes and
// writes too. The stale write must be refused. On a technique whose lock
// never expires, another client's DEL frees A's lock instead (freeForever).
func fencingScenario(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: shortTTL})
	if err != nil {
		fail(r, "build", err)
		return
	}
	res, err := fencing.NewResource(e.pools[0], e.prefix+"resource")
	if err != nil {
		fail(r, "resource", err)
		return
	}
	r.Attempts = 1
	ctxA, ctxB := as(ctx, "A"), as(ctx, "B")
	a, err := lockWithin(ctxA, l, "fenced")
	if err != nil {
		fail(r, "A Lock", err)
		return
	}
	e.rec.note("A", "A pauses (a GC pause, say) with its lease")
	// A pauses (a GC pause, say) while its lease runs out and B takes over.
	freed, err := e.freeForever(ctx, l.Properties(), "fenced")
	if err != nil {
		fail(r, "free A's lock", err)
		return
	}
	woke := "A woke after its lease ended"
	if freed != "" {
		woke = freed + "A woke after B took over"
	}
	b, err := lockWithin(ctxB, l, "fenced")
	if err != nil {
		fail(r, "B Lock", err)
		return
	}
	if err := e.rec.record(ctxB, "Write", fmt.Sprintf("fence %d", b.Fence()), func() error { return res.Write(ctxB, b.Fence(), "B") }); err != nil {
		fail(r, "B write", err)
		return
	}
	// The resource has no expiry of its own; the sweep at the scenario's
	// end removes it, and this bounds its life should the sweep not run.
	if _, err := e.do(ctx, 0, "PEXPIRE", e.prefix+"resource", dataTTL.Milliseconds()); err != nil {
		fail(r, "expire resource", err)
		return
	}
	e.rec.note("A", "A wakes and writes")
	err = e.rec.record(ctxA, "Write", fmt.Sprintf("fence %d", a.Fence()), func() error { return res.Write(ctxA, a.Fence(), "A") })
	switch {
	case err == nil:
		r.Violations = 1
		r.Account = fmt.Sprintf("%s and its write (fence %d) overwrote B's (fence %d)", woke, a.Fence(), b.Fence())
	case errors.Is(err, fencing.ErrStaleToken):
		r.Account = fmt.Sprintf("%s; its write (fence %d) was refused after B's (fence %d)", woke, a.Fence(), b.Fence())
	default:
		fail(r, "A write", err)
	}
	_ = b.Unlock(ctxB)
}

// heldEverywhere waits, up to bound, until every node holds lock name with
// token.
func heldEverywhere(ctx context.Context, e *env, name, token string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for i := range e.pools {
		for {
			v, err := e.lockValue(ctx, i, name)
			if err == nil && v == token {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %d: lock %s holds %q, %v; want A's token", i+1, name, v, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

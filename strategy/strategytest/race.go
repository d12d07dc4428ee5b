package strategytest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// ownerSafeRelease: A starts to release and is stopped inside its release
// (white-box) or simply late (black-box); its lock expires and B takes it;
// then, once A's lease has run out by its own Deadline too, A's release
// goes on. If C can then take the lock while B still
// believes it holds, A's stale release removed B's lock. On a technique
// whose lock never expires, another client's DEL frees A's lock instead
// (freeForever).
func ownerSafeRelease(ctx context.Context, e *env, r *Result) {
	l, err := e.locker(strategy.Config{TTL: shortTTL})
	if err != nil {
		fail(r, "build", err)
		return
	}
	r.Attempts = 1
	ctxA, ctxB, ctxC := as(ctx, "A"), as(ctx, "B"), as(ctx, "C")
	a, err := lockWithin(ctxA, l, "stale")
	if err != nil {
		fail(r, "A Lock", err)
		return
	}
	resumeA := func() error { return a.Unlock(ctxA) }
	if w, ok := windowsOf(l.Properties().Name); ok {
		resume, err := stopAt(ctxA, e.rec, w.release, a.Unlock)
		defer resume()
		if err != nil {
			fail(r, "stop A's release", err)
			return
		}
		resumeA = resume
	}
	freed, err := e.freeForever(ctx, l.Properties(), "stale")
	if err != nil {
		fail(r, "free A's lock", err)
		return
	}
	b, err := lockWithin(ctxB, l, "stale") // comes once A's lock expired
	if err != nil {
		fail(r, "B Lock", err)
		return
	}
	tB := time.Now()
	if expires(l.Properties()) {
		// A resumes once its own lease has run out too, by its Deadline:
		// the stale holder of the articles. Redis can free the key a
		// moment before that Deadline by the client's clock (the key's
		// expiry is the server's, in ms), and a release that still came in
		// time by A's clock would tell another story.
		select {
		case <-time.After(time.Until(a.Deadline())):
		case <-ctx.Done():
			fail(r, "wait for A's deadline", ctx.Err())
			return
		}
	}
	errA := resumeA()
	c, err := probe(ctxC, l, "stale")
	switch {
	case err == nil:
		tl := newTimeline()
		tl.hold("B", tB, b.Deadline())
		tl.hold("C", time.Now(), c.Deadline())
		r.Violations = 1
		r.Account = fmt.Sprintf("%sA's late Unlock (%v) deleted B's lock; C took it while B still held it", freed, errOrOK(errA))
		if ov := tl.overlaps(); len(ov) > 0 {
			r.Account += ": " + ov[0].describe("stale")
		}
		_ = c.Unlock(ctxC)
	case errors.Is(err, strategy.ErrNotAcquired):
		r.Account = fmt.Sprintf("%sA's late Unlock returned %v and left B's lock in place", freed, errOrOK(errA))
		_ = b.Unlock(ctxB)
	default:
		fail(r, "C TryLock", err)
	}
}

// clockSkew: B's clock runs a minute ahead of A's while A holds the lock.
// For a technique spanning several nodes it also replays Kleppmann's case:
// A holds a bare quorum, one of those nodes' clock jumps forward so A's key
// there expires early, and B forms a quorum with the nodes A never reached.
func clockSkew(ctx context.Context, e *env, r *Result) {
	r.Attempts = 1
	violations, account, err := skewedClients(ctx, e)
	if err != nil {
		fail(r, "skewed clients", err)
		return
	}
	if len(e.nodes) > 1 {
		r.Attempts = 2
		v, acc, err := serverClockJump(ctx, e)
		if err != nil {
			fail(r, "server clock jump", err)
			return
		}
		violations += v
		account += "; " + acc
	}
	r.Violations, r.Account = violations, account
}

func skewedClients(ctx context.Context, e *env) (int, string, error) {
	const ttl = 5 * time.Second
	la, err := e.locker(strategy.Config{TTL: ttl})
	if err != nil {
		return 0, "", err
	}
	lb, err := e.locker(strategy.Config{TTL: ttl, Clock: func() time.Time { return time.Now().Add(time.Minute) }})
	if err != nil {
		return 0, "", err
	}
	ctxA, ctxB := as(ctx, "A"), as(ctx, "B")
	a, err := lockWithin(ctxA, la, "skew")
	if err != nil {
		return 0, "", fmt.Errorf("A Lock: %w", err)
	}
	tA := time.Now()
	e.rec.note("B", "B's clock runs a minute ahead of A's")
	b, err := probe(ctxB, lb, "skew")
	switch {
	case err == nil:
		tl := newTimeline()
		tl.hold("A", tA, a.Deadline())
		tl.hold("B", time.Now(), b.Deadline())
		_ = b.Unlock(ctxB)
		return 1, "B, its clock a minute ahead, took A's live lock: " + tl.overlaps()[0].describe("skew"), nil
	case errors.Is(err, strategy.ErrNotAcquired):
		_ = a.Unlock(ctxA)
		return 0, "B, its clock a minute ahead, was refused A's live lock", nil
	}
	return 0, "", fmt.Errorf("B TryLock: %w", err)
}

// serverClockJump needs managed nodes to keep A off a minority.
func serverClockJump(ctx context.Context, e *env) (int, string, error) {
	n := len(e.nodes)
	quorum := n/2 + 1
	la, err := e.locker(strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		return 0, "", err
	}
	e.rec.note("", "second case: nodes %d-%d are killed, so that A's lock lands on a bare quorum", quorum+1, n)
	for _, node := range e.nodes[quorum:] {
		node.Kill()
	}
	ctxA, ctxB := as(ctx, "A"), as(ctx, "B")
	a, err := lockWithin(ctxA, la, "jump")
	if err != nil {
		return 0, "", fmt.Errorf("A Lock on nodes 1-%d: %w", quorum, err)
	}
	for _, node := range e.nodes[quorum:] {
		node.Restart()
	}
	e.rec.note("", "nodes %d-%d restart, empty", quorum+1, n)
	e.rec.note("", "node %d's clock jumps forward: A's key there expires now (emulated by PEXPIRE 1 ms)", quorum)
	// Node `quorum`'s clock jumps forward past the lock's expiry: emulated by
	// expiring A's key there now, which is what the jump makes Redis do.
	for _, key := range protocol.LockKeys(e.prefix, "jump") {
		if _, err := e.do(ctx, quorum-1, "PEXPIRE", key, 1); err != nil {
			return 0, "", fmt.Errorf("emulate the clock jump: %w", err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	lb, err := e.locker(strategy.Config{TTL: 10 * time.Second})
	if err != nil {
		return 0, "", err
	}
	b, err := probe(ctxB, lb, "jump")
	switch {
	case err == nil:
		_ = b.Unlock(ctxB)
		if a.Deadline().After(time.Now()) {
			return 1, fmt.Sprintf("node %d's clock jumped and B formed a quorum with nodes %d-%d while A's lease was valid", quorum, quorum, n), nil
		}
		return 0, "B got the lock only after A's lease ended", nil
	case errors.Is(err, strategy.ErrNotAcquired):
		_ = a.Unlock(ctxA)
		return 0, fmt.Sprintf("node %d's clock jumped, yet B was refused", quorum), nil
	}
	return 0, "", fmt.Errorf("B TryLock: %w", err)
}

// probe makes one attempt to take key, as TryLock does, but repeats it,
// within waitBound, while the answer is a Redis failure rather than a
// verdict: a scenario's question is whether the lock is free, and a node
// slow to answer on a loaded machine says nothing about that.
func probe(ctx context.Context, l strategy.Locker, key string) (strategy.Lease, error) {
	deadline := time.Now().Add(waitBound)
	for {
		lease, err := l.TryLock(ctx, key)
		if err == nil || errors.Is(err, strategy.ErrNotAcquired) || ctx.Err() != nil || time.Now().After(deadline) {
			return lease, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockWithin locks key, waiting at most waitBound.
func lockWithin(ctx context.Context, l strategy.Locker, key string) (strategy.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, waitBound)
	defer cancel()
	return l.Lock(ctx, key)
}

func errOrOK(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

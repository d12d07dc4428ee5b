package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// frozenSlack is how far past its context's deadline, timeout after it
// began, a call to a frozen node may return. The contract is ~50 ms; five
// timeouts (1 s for the suite's 200 ms) leave a machine three times slower
// than usual, under the race detector, ample room, while still catching a
// call that waits for anything but its context: a frozen node answers
// nothing, so such a call waits for a 10 s TTL's bounds or for the node to
// thaw at the test's end.
func frozenSlack(timeout time.Duration) time.Duration { return 5 * timeout }

// Conformance runs, as subtests, every check a technique must pass without
// faults: contention, TryLock on a held key, crash liveness, stale release
// (for techniques that claim OwnerSafeRelease), extend, a killed node, a
// frozen node, bad input, Close (see testClose), and the lease and pool
// rules: a failed Unlock or Extend spends nothing, a call with an ended
// context takes no connection, colliding Config.Token values make no second
// holder, a pool that returns no connection fails the call without a
// panic, and connections without redis.ConnWithContext work; an acquire
// whose reply is lost is taken back, and a Lock rides out a short loss of
// replies. Each subtest gets a fresh Redis node. Every error a subtest
// gets from f, a Locker or a lease goes through CheckError as well.
func Conformance(t *testing.T, f Factory) {
	t.Helper()
	checks := &errorChecks{}
	tests := []struct {
		name string
		run  func(t *testing.T, f Factory, node *redistest.Node)
	}{
		{"contention", testContention},
		{"trylock-held", testTryLockHeld},
		{"crash-frees-after-ttl", testCrashFrees},
		{"stale-release", testStaleRelease},
		{"extend", testExtend},
		{"killed-node", testKilledNode},
		{"frozen-node", testFrozenNode},
		{"invalid-input", testInvalidInput},
		{"close", testClose},
		{"failed-unlock-keeps-lease", testFailedUnlock},
		{"dead-context", testDeadContext},
		{"shared-token", testSharedToken},
		{"nil-conn-pool", testNilConnPool},
		{"panicking-conns", testPanickingConns},
		{"bare-conns", testBareConns},
		{"lost-acquire-reply", testLostAcquireReply},
		{"reply-blip", testReplyBlip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			tt.run(t, checks.factory(t, f), node)
		})
	}
}

func testContention(t *testing.T, f Factory, node *redistest.Node) {
	l := MustNew(t, f, node.Pool(), strategy.Config{})
	Contention(t, l, node.Pool(), "contended", 32, 200)
}

func testTryLockHeld(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	const ttl = 10 * time.Second
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: ttl})
	held := mustLock(t, l, "k")
	defer held.Unlock(ctx)
	start := time.Now()
	_, err := l.TryLock(ctx, "k")
	if !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock() = %v, want %v", err, strategy.ErrNotAcquired)
	}
	// "At once": a round trip or two, far below the TTL a retrying TryLock
	// would wait for; a quarter of it leaves a loaded machine ample room.
	assert.Less(t, time.Since(start), ttl/4, "TryLock() of a held key took that long, want an immediate answer")
}

func testCrashFrees(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	const ttl = 500 * time.Millisecond
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: ttl})
	if !expires(l.Properties()) {
		t.Skip("technique's lock never expires; its own tests show a dead holder keeps it forever")
	}
	_ = mustLock(t, l, "k") // the holder "crashes": its lease is dropped, never unlocked
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Fatalf("TryLock() right after the crash = %v, want %v", err, strategy.ErrNotAcquired)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lease, err := l.Lock(waitCtx, "k")
	if err != nil {
		t.Fatalf("Lock() after the holder crashed = %v, want nil", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

func testStaleRelease(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: 200 * time.Millisecond})
	if !l.Properties().OwnerSafeRelease {
		t.Skip("technique does not claim OwnerSafeRelease; its own tests show the stale release")
	}
	a := mustLock(t, l, "k")
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	b, err := l.Lock(waitCtx, "k") // succeeds only once a's lock expired
	if err != nil {
		t.Fatalf("Lock() by B = %v, want nil", err)
	}
	if err := a.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("stale Extend() = %v, want %v", err, strategy.ErrNotHeld)
	}
	if err := a.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("stale Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
	if got := LockValue(t, node, "lock:", "k"); got != b.Token() {
		t.Errorf("lock k after stale release holds %q; want B's token %q", got, b.Token())
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("B Unlock() = %v, want nil", err)
	}
}

func testExtend(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: time.Second})
	lease := mustLock(t, l, "k")
	before := lease.Deadline()
	if !extends(l.Properties()) {
		checkExtendUnsupported(t, "Extend(5s)", lease.Extend(ctx, 5*time.Second))
		if after := lease.Deadline(); !after.Equal(before) {
			t.Errorf("Deadline() after an unsupported Extend = %v, want it unchanged, %v", after, before)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Errorf("Unlock() after an unsupported Extend = %v, want nil", err)
		}
		return
	}
	if err := lease.Extend(ctx, 5*time.Second); err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	if after := lease.Deadline(); !after.After(before.Add(3 * time.Second)) {
		t.Errorf("Deadline() after Extend(5s) = %v, want later than %v", after, before.Add(3*time.Second))
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Extend() after Unlock = %v, want %v", err, strategy.ErrNotHeld)
	}
	if err := lease.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("second Unlock() = %v, want %v", err, strategy.ErrNotHeld)
	}
}

func testKilledNode(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	lease := mustLock(t, l, "held")
	node.Kill()

	if _, err := l.TryLock(ctx, "k"); err == nil || errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("TryLock() on a killed node = %v, want a Redis failure that is not %v", err, strategy.ErrNotAcquired)
	}
	lockCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := l.Lock(lockCtx, "k")
	if !errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock() on a killed node = %v, want %v and %v", err, strategy.ErrNotAcquired, context.DeadlineExceeded)
	}
	if err := lease.Extend(ctx, time.Second); !extends(l.Properties()) {
		checkExtendUnsupported(t, "Extend() on a killed node", err)
	} else if err == nil || errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Extend() on a killed node = %v, want a Redis failure that is not %v", err, strategy.ErrNotHeld)
	}
	if err := lease.Unlock(ctx); err == nil || errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Unlock() on a killed node = %v, want a Redis failure that is not %v", err, strategy.ErrNotHeld)
	}
}

func testFrozenNode(t *testing.T, f Factory, node *redistest.Node) {
	const timeout = 200 * time.Millisecond
	l := MustNew(t, f, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	extendLease := mustLock(t, l, "held-1")
	unlockLease := mustLock(t, l, "held-2")
	node.Pause()
	t.Cleanup(node.Resume)

	ops := []struct {
		name string
		call func(ctx context.Context) error
		want []error
	}{
		{"TryLock", func(ctx context.Context) error { _, err := l.TryLock(ctx, "k"); return err },
			[]error{context.DeadlineExceeded}},
		{"Lock", func(ctx context.Context) error { _, err := l.Lock(ctx, "k"); return err },
			[]error{context.DeadlineExceeded, strategy.ErrNotAcquired}},
		{"Extend", func(ctx context.Context) error { return extendLease.Extend(ctx, time.Second) },
			[]error{context.DeadlineExceeded}},
		{"Unlock", func(ctx context.Context) error { return unlockLease.Unlock(ctx) },
			[]error{context.DeadlineExceeded}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if op.name == "Extend" && !extends(l.Properties()) {
				checkExtendUnsupported(t, "Extend() on a frozen node", op.call(ctx))
				return
			}
			start := time.Now()
			err := op.call(ctx)
			late := time.Since(start) - timeout
			t.Logf("%s returned %v after the deadline", op.name, late.Round(time.Millisecond))
			for _, want := range op.want {
				if !errors.Is(err, want) {
					t.Errorf("%s() on a frozen node = %v, want %v", op.name, err, want)
				}
			}
			assert.LessOrEqual(t, late, frozenSlack(timeout), "%s() on a frozen node: how late it returned after its deadline", op.name)
		})
	}
}

func testInvalidInput(t *testing.T, f Factory, node *redistest.Node) {
	ctx := context.Background()
	configs := []struct {
		name string
		pool strategy.Pool
		cfg  strategy.Config
	}{
		{"nil pool", nil, strategy.Config{}},
		{"typed nil pool", (*redis.Pool)(nil), strategy.Config{}},
		{"negative TTL", node.Pool(), strategy.Config{TTL: -time.Second}},
		{"TTL below 1ms", node.Pool(), strategy.Config{TTL: 500 * time.Microsecond}},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			if _, err := f(c.pool, c.cfg); !errors.Is(err, strategy.ErrInvalidConfig) {
				t.Errorf("New(%s) = %v, want %v", c.name, err, strategy.ErrInvalidConfig)
			}
		})
	}
	l := MustNew(t, f, node.Pool(), strategy.Config{})
	if _, err := l.TryLock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("TryLock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	if _, err := l.Lock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("Lock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	lease := mustLock(t, l, "k")
	if err := lease.Extend(ctx, 500*time.Microsecond); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("Extend(500µs) = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

// mustLock takes key with a 10 s bound or fails the test, and checks the
// lease's Deadline against the call's start and return (CheckDeadline).
func mustLock(t testing.TB, l strategy.Locker, key string) strategy.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	lease, err := l.Lock(ctx, key)
	if err != nil {
		t.Fatalf("Lock(%q) = %v, want nil", key, err)
	}
	CheckDeadline(t, lease, start, time.Now(), TTLOf(l))
	return lease
}

package redlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestValidity checks that Deadline is the start of the attempt plus TTL
// minus the time the attempt took minus the drift allowance
// (TTL*DriftFactor + 2 ms), for TryLock and for Extend.
func TestValidity(t *testing.T) {
	nodes := startNodes(t, 5)
	ctx := context.Background()
	const ttl, driftFactor = time.Second, 0.1
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, DriftFactor: driftFactor, Config: strategy.Config{TTL: ttl}})
	drift := func(ttl time.Duration) time.Duration {
		return time.Duration(float64(ttl)*driftFactor) + redlock.DriftFloor
	}
	// check fails unless deadline lies in [end+ttl-drift-(end-start), start+ttl-drift].
	check := func(op string, start, end, deadline time.Time, ttl time.Duration) {
		t.Helper()
		latest := start.Add(ttl - drift(ttl))
		earliest := latest.Add(-end.Sub(start))
		if deadline.After(latest) || deadline.Before(earliest) {
			t.Errorf("%s Deadline() = start + %v, want within [start + %v, start + %v]",
				op, deadline.Sub(start), earliest.Sub(start), latest.Sub(start))
		}
	}

	start := time.Now()
	lease, err := l.TryLock(ctx, "k")
	end := time.Now()
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	check("TryLock", start, end, lease.Deadline(), ttl)

	const longer = 3 * time.Second
	start = time.Now()
	err = lease.Extend(ctx, longer)
	end = time.Now()
	if err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	check("Extend", start, end, lease.Deadline(), longer)
	if err := lease.Unlock(ctx); err != nil {
		t.Errorf("Unlock() = %v, want nil", err)
	}
}

// TestValidityRunsOut: a TTL no larger than the drift allowance leaves no
// validity, so even an uncontended attempt with every node granting fails,
// and the nodes it locked are released.
func TestValidityRunsOut(t *testing.T) {
	nodes := startNodes(t, 3)
	ctx := context.Background()
	// 2 ms TTL, drift 2 ms + 1%: validity is negative before any reply.
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: patient, Config: strategy.Config{TTL: 2 * time.Millisecond}})
	lease, err := l.TryLock(ctx, "k")
	if err == nil || errors.Is(err, strategy.ErrNotAcquired) || !strings.Contains(err.Error(), "validity") {
		t.Fatalf("TryLock() = %v, %v; want a validity failure that is not %v", lease, err, strategy.ErrNotAcquired)
	}
	waitIdle(t, l)
	wantValues(t, nodes, protocol.LockKey("lock:", "k"), repeat("", 3))
}

package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestCloseWaitsForBackgroundCalls: a TryLock decided on the answering
// nodes leaves its call to a frozen node running in the background; Close
// returns once that call has ended, so no goroutine is left right after
// it, and the Locker refuses further calls with ErrClosed.
func TestCloseWaitsForBackgroundCalls(t *testing.T) {
	nodes := startNodes(t, 3)
	ctx := context.Background()
	running := goleak.IgnoreCurrent() // the harness's own goroutines
	const nodeTimeout = 2 * time.Second
	l, err := redlock.New(poolsOf(nodes), redlock.Config{NodeTimeout: nodeTimeout})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)  // should the test stop before its own Close
	warm := mustLock(t, l, "warm") // pooled connections to every node
	if err := warm.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	waitIdle(t, l)
	nodes[2].Pause()
	t.Cleanup(nodes[2].Resume)
	lease, err := l.TryLock(ctx, "k") // a quorum of 2 answers; node 2's call runs on
	if err != nil {
		t.Fatalf("TryLock() with node 2 frozen = %v, want nil", err)
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() with node 2 frozen = %v, want nil", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if err := goleak.Find(running); err != nil {
		t.Errorf("goroutines left right after Close: %v", err)
	}
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrClosed) {
		t.Errorf("TryLock() after Close = %v, want %v", err, strategy.ErrClosed)
	}
}

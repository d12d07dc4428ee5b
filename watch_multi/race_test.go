package watchmulti_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// meddler writes the lock key (prefix included) while the owner's release
// or extend is held after WATCH and a GET that matched, and returns the
// value the key must hold once the owner is done ("" for none).
type meddler func(t *testing.T, node *redistest.Node, l strategy.Locker, key, token string) string

// noMeddling leaves the key alone.
func noMeddling(*testing.T, *redistest.Node, strategy.Locker, string, string) string { return "" }

// rewriteOwnToken sets the key again to the owner's own token: the value
// still matches, but the write aborts the owner's transaction.
func rewriteOwnToken(t *testing.T, node *redistest.Node, _ strategy.Locker, key, token string) string {
	t.Helper()
	locktest.MustDo(t, node, "SET", "lock:"+key, token, "EX", 30)
	return ""
}

// overwriteOtherToken replaces the owner's token with another.
func overwriteOtherToken(t *testing.T, node *redistest.Node, _ strategy.Locker, key, _ string) string {
	t.Helper()
	locktest.MustDo(t, node, "SET", "lock:"+key, "intruder", "EX", 30)
	return "intruder"
}

// deleteAndTakeOver deletes the lock (as if it expired) and lets another
// lease, B, take it through l.
func deleteAndTakeOver(t *testing.T, node *redistest.Node, l strategy.Locker, key, _ string) string {
	t.Helper()
	locktest.MustDo(t, node, "DEL", "lock:"+key)
	b, err := l.TryLock(context.Background(), key)
	if err != nil {
		t.Fatalf("TryLock() by B after DEL = %v, want nil", err)
	}
	return b.Token()
}

// TestReleaseRetriesWhenKeyChanges holds the releasing client after WATCH
// and a GET that returned its token, writes the key from outside, and lets
// it go: EXEC must abort, the release must start over (a second pass
// through the fault point) and must delete the key only if it still holds
// the owner's token.
func TestReleaseRetriesWhenKeyChanges(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 30 * time.Second})
	tests := []struct {
		name       string
		key        string
		meddle     meddler
		wantErr    error
		wantPasses int32
	}{
		{"untouched", "untouched", noMeddling, nil, 1},
		{"rewritten with the owner's token", "own-token", rewriteOwnToken, nil, 2},
		// The point marks the window after a GET that matched. Below, the
		// pass after the abort finds another token and ends at UNWATCH
		// without reaching it: the ErrNotHeld comes from that second GET.
		{"overwritten with another token", "other-token", overwriteOtherToken, strategy.ErrNotHeld, 1},
		{"deleted and taken by another locker", "taken-over", deleteAndTakeOver, strategy.ErrNotHeld, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := l.TryLock(context.Background(), tt.key)
			if err != nil {
				t.Fatalf("TryLock() by A = %v, want nil", err)
			}
			s := locktest.StopAt(t, fault.WatchMultiReleaseAfterWatch, a.Unlock)
			want := tt.meddle(t, node, l, tt.key, a.Token())
			if err := s.Resume(); !errors.Is(err, tt.wantErr) {
				t.Errorf("Unlock() = %v, want %v", err, tt.wantErr)
			}
			if got := s.Passes(); got != tt.wantPasses {
				t.Errorf("passes through %s = %d, want %d", fault.WatchMultiReleaseAfterWatch, got, tt.wantPasses)
			}
			if got := locktest.Get(t, node, "lock:"+tt.key); got != want {
				t.Errorf("GET lock:%s after Unlock = %q, want %q", tt.key, got, want)
			}
		})
	}
}

// TestExtendRetriesWhenKeyChanges is the extend twin: a PEXPIRE that
// retries after the abort, and never extends another owner's lock.
func TestExtendRetriesWhenKeyChanges(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 30 * time.Second})
	const ttl = 5 * time.Second
	tests := []struct {
		name             string
		key              string
		meddle           meddler
		wantErr          error
		wantPasses       int32
		wantOwner        bool          // the key still holds A's token
		minPTTL, maxPTTL time.Duration // the key's expiry after Extend
	}{
		{"untouched", "untouched", noMeddling, nil, 1, true, ttl - time.Second, ttl},
		{"rewritten with the owner's token", "own-token", rewriteOwnToken, nil, 2, true, ttl - time.Second, ttl},
		// As for Unlock: the second pass's GET fails to match before the point.
		{"overwritten with another token", "other-token", overwriteOtherToken, strategy.ErrNotHeld, 1, false, 20 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := l.TryLock(context.Background(), tt.key)
			if err != nil {
				t.Fatalf("TryLock() by A = %v, want nil", err)
			}
			s := locktest.StopAt(t, fault.WatchMultiExtendAfterWatch, func(ctx context.Context) error {
				return a.Extend(ctx, ttl)
			})
			want := tt.meddle(t, node, l, tt.key, a.Token())
			if tt.wantOwner {
				want = a.Token()
			}
			if err := s.Resume(); !errors.Is(err, tt.wantErr) {
				t.Errorf("Extend(%v) = %v, want %v", ttl, err, tt.wantErr)
			}
			if got := s.Passes(); got != tt.wantPasses {
				t.Errorf("passes through %s = %d, want %d", fault.WatchMultiExtendAfterWatch, got, tt.wantPasses)
			}
			if got := locktest.Get(t, node, "lock:"+tt.key); got != want {
				t.Errorf("GET lock:%s after Extend = %q, want %q", tt.key, got, want)
			}
			if got := locktest.PTTL(t, node, "lock:"+tt.key); got <= tt.minPTTL || got > tt.maxPTTL {
				t.Errorf("PTTL lock:%s after Extend = %v, want in (%v, %v]", tt.key, got, tt.minPTTL, tt.maxPTTL)
			}
		})
	}
}

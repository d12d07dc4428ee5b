package setnxexpire_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestWatchedTransaction writes the key from outside while Unlock or Extend
// sits between its matching GET and MULTI. WATCH must abort the
// transaction: if the key now holds another owner's token the retry returns
// ErrNotHeld and leaves it alone; if it still holds ours (only its TTL was
// touched) the retry goes through.
func TestWatchedTransaction(t *testing.T) {
	ops := []struct {
		name  string
		point string
		call  func(ctx context.Context, lease strategy.Lease) error
		// after checks the key once the call succeeded.
		after func(t *testing.T, node *redistest.Node)
	}{
		{
			name: "Unlock", point: fault.SetNXExpireReleaseAfterWatch,
			call: func(ctx context.Context, lease strategy.Lease) error { return lease.Unlock(ctx) },
			after: func(t *testing.T, node *redistest.Node) {
				if n, err := redis.Int(node.Do("EXISTS", "lock:k")); err != nil || n != 0 {
					t.Errorf("EXISTS lock:k after Unlock = %d, %v; want 0", n, err)
				}
			},
		},
		{
			name: "Extend", point: fault.SetNXExpireExtendAfterWatch,
			call: func(ctx context.Context, lease strategy.Lease) error { return lease.Extend(ctx, 30*time.Second) },
			after: func(t *testing.T, node *redistest.Node) {
				if ms := pttl(t, node, "lock:k"); ms <= 20000 || ms > 30000 {
					t.Errorf("PTTL lock:k after Extend(30s) = %d, want in (20000, 30000]", ms)
				}
			},
		},
	}
	writes := []struct {
		name      string
		write     []any // the outside write, run on the first pass only
		wantErr   error
		wantValue string // "" means the lease's token
		wantPTTL  int64  // with wantErr: the other owner's PTTL is kept, at least this
		wantPass  int    // passes through the fault point
	}{
		{"taken by another owner", []any{"SET", "lock:k", "other", "PX", 60000}, strategy.ErrNotHeld, "other", 50000, 1},
		{"own key touched", []any{"PEXPIRE", "lock:k", 60000}, nil, "", 0, 2},
	}
	for _, op := range ops {
		for _, w := range writes {
			t.Run(op.name+"/"+w.name, func(t *testing.T) {
				locktest.NoLeaks(t)
				node := redistest.Start(t, 1)[0]
				l := newLocker(t, node, strategy.Config{TTL: 10 * time.Second})
				lease, err := l.TryLock(context.Background(), "k")
				if err != nil {
					t.Fatalf("TryLock() = %v, want nil", err)
				}
				passes := 0
				hook := func(_ context.Context, p string) error {
					if p != op.point {
						return nil
					}
					passes++
					if passes == 1 {
						if _, err := node.Do(w.write[0].(string), w.write[1:]...); err != nil {
							t.Errorf("%v = %v, want nil", w.write, err)
						}
					}
					return nil
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err = op.call(fault.With(ctx, hook), lease)
				if w.wantErr == nil && err != nil || w.wantErr != nil && !errors.Is(err, w.wantErr) {
					t.Fatalf("%s() after an outside write = %v, want %v", op.name, err, w.wantErr)
				}
				if passes != w.wantPass {
					t.Errorf("passes through %s = %d, want %d", op.point, passes, w.wantPass)
				}
				if w.wantErr == nil {
					op.after(t, node)
					return
				}
				if got := locktest.Get(t, node, "lock:k"); got != w.wantValue {
					t.Errorf("GET lock:k = %q, want %q (left alone)", got, w.wantValue)
				}
				if ms := pttl(t, node, "lock:k"); ms < w.wantPTTL {
					t.Errorf("PTTL lock:k = %d, want >= %d (left alone)", ms, w.wantPTTL)
				}
			})
		}
	}
}

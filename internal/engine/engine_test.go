package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// scripted is a Technique whose answers the test sets. The engine's loop and
// bookkeeping are under test here, not Redis, so no server is involved.
type scripted struct {
	acquire  func(n int) (engine.Acquired, error)
	attempts atomic.Int32
	released atomic.Int32
	extended atomic.Int32
	lastTTL  atomic.Int64
	lastKey  atomic.Value
}

func (s *scripted) Acquire(_ context.Context, a engine.Attempt) (engine.Acquired, error) {
	s.lastKey.Store(a.Key)
	return s.acquire(int(s.attempts.Add(1)))
}

func (s *scripted) Release(context.Context, engine.Held) error {
	s.released.Add(1)
	return nil
}

func (s *scripted) Extend(_ context.Context, _ engine.Held, ttl time.Duration) (engine.Acquired, error) {
	s.extended.Add(1)
	s.lastTTL.Store(int64(ttl))
	return engine.Acquired{Value: fmt.Sprintf("v%d", s.extended.Load())}, nil
}

var errDown = errors.New("connection refused")

func held(int) (engine.Acquired, error) {
	return engine.Acquired{}, fmt.Errorf("taken: %w", strategy.ErrNotAcquired)
}

// newLocker builds a Locker over tech, closed when the test ends: Close
// stops the clean-ups that a technique failing on purpose keeps failing
// (a take-back is tried again for up to the TTL).
func newLocker(t *testing.T, tech engine.Technique, cfg strategy.Config) *engine.Locker {
	t.Helper()
	l, err := engine.New(tech, strategy.Properties{Name: "test"}, cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestLockGivesUp(t *testing.T) {
	tests := []struct {
		name    string
		acquire func(int) (engine.Acquired, error)
		retry   strategy.Retry
		timeout time.Duration
		want    []error
		notWant []error
	}{
		{"held until deadline", held, strategy.Fixed(time.Millisecond), 30 * time.Millisecond,
			[]error{strategy.ErrNotAcquired, context.DeadlineExceeded}, []error{errDown}},
		{"redis down until deadline", func(int) (engine.Acquired, error) { return engine.Acquired{}, errDown },
			strategy.Fixed(time.Millisecond), 30 * time.Millisecond,
			[]error{strategy.ErrNotAcquired, context.DeadlineExceeded, errDown}, nil},
		{"no retry", held, strategy.NoRetry(), time.Second,
			[]error{strategy.ErrNotAcquired}, []error{context.DeadlineExceeded}},
		{"crash is not retried", func(int) (engine.Acquired, error) { return engine.Acquired{}, fault.ErrCrashed },
			strategy.Fixed(time.Millisecond), time.Second,
			[]error{fault.ErrCrashed}, []error{strategy.ErrNotAcquired}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLocker(t, &scripted{acquire: tt.acquire}, strategy.Config{Retry: tt.retry})
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			_, err := l.Lock(ctx, "k")
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("Lock() = %v, want %v", err, want)
				}
			}
			for _, no := range tt.notWant {
				if errors.Is(err, no) {
					t.Errorf("Lock() = %v, want no %v", err, no)
				}
			}
		})
	}
}

func TestLockRetriesThroughFailures(t *testing.T) {
	tech := &scripted{acquire: func(n int) (engine.Acquired, error) {
		switch {
		case n < 3:
			return engine.Acquired{}, errDown
		case n < 5:
			return held(n)
		}
		return engine.Acquired{}, nil
	}}
	l := newLocker(t, tech, strategy.Config{Retry: strategy.Fixed(time.Millisecond), Prefix: "p:"})
	lease, err := l.Lock(context.Background(), "k")
	if err != nil {
		t.Fatalf("Lock() = %v, want nil", err)
	}
	if got := tech.attempts.Load(); got != 5 {
		t.Errorf("attempts = %d, want 5", got)
	}
	if got := tech.lastKey.Load(); got != "p:k" || lease.Key() != "k" {
		t.Errorf("Redis key %v, lease key %q; want p:k and k", got, lease.Key())
	}
}

func TestLeaseBookkeeping(t *testing.T) {
	ctx := context.Background()
	tech := &scripted{acquire: func(int) (engine.Acquired, error) { return engine.Acquired{Fence: 7}, nil }}
	l := newLocker(t, tech, strategy.Config{TTL: time.Second, Token: func() string { return "tok" }})
	start := time.Now()
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	// Config.Token names the holder; the value is made unique per call.
	if tok := lease.Token(); !strings.HasPrefix(tok, "tok.") || len(tok) != len("tok.")+26 || lease.Fence() != 7 {
		t.Errorf("Token(), Fence() = %q, %d; want tok.<26 random characters>, 7", tok, lease.Fence())
	}
	if d := lease.Deadline(); d.Before(start.Add(time.Second)) || d.After(time.Now().Add(time.Second)) {
		t.Errorf("Deadline() = %v, want start + 1s", d)
	}
	if err := lease.Extend(ctx, 0); err != nil {
		t.Fatalf("Extend(0) = %v, want nil", err)
	}
	if got := time.Duration(tech.lastTTL.Load()); got != time.Second {
		t.Errorf("Extend(0) asked for %v, want the Locker's TTL 1s", got)
	}
	if lease.Token() != "v1" {
		t.Errorf("Token() after Extend = %q, want the extend's new value v1", lease.Token())
	}
	if err := lease.Extend(ctx, time.Microsecond); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("Extend(1µs) = %v, want %v", err, strategy.ErrInvalidConfig)
	}

	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			if lease.Unlock(ctx) == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || tech.released.Load() != 1 {
		t.Errorf("8 concurrent Unlock(): %d succeeded, %d reached Redis; want 1 and 1", ok.Load(), tech.released.Load())
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, strategy.ErrNotHeld) {
		t.Errorf("Extend() after Unlock = %v, want %v", err, strategy.ErrNotHeld)
	}
}

func TestInvalidInput(t *testing.T) {
	ctx := context.Background()
	if _, err := engine.New(nil, strategy.Properties{}, strategy.Config{}); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("New(nil technique) = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	if err := engine.CheckPool(nil, "pool"); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("CheckPool(nil) = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	tech := &scripted{acquire: func(int) (engine.Acquired, error) { return engine.Acquired{}, nil }}
	l := newLocker(t, tech, strategy.Config{Token: func() string { return "" }})
	if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("TryLock() with an empty token = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	if _, err := l.TryLock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("TryLock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
	}
}

package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy"
)

// releasing is scripted with a release outcome the test sets.
type releasing struct {
	*scripted
	release error
}

func (r *releasing) Release(context.Context, engine.Held) error { return r.release }

func free(int) (engine.Acquired, error) { return engine.Acquired{Fence: 3}, nil }

// TestObserverDeadlinePassed: an Unlock or Extend that succeeds after the
// lease's Deadline reports Lost (deadline passed, how late, no error),
// then Released or Extended.
func TestObserverDeadlinePassed(t *testing.T) {
	ctx := context.Background()
	const validity = time.Millisecond
	tests := []struct {
		name string
		op   string
		call func(strategy.Lease) error
		want string
	}{
		{"unlock", strategy.OpUnlock, func(l strategy.Lease) error { return l.Unlock(ctx) }, "acquired lost released"},
		{"extend", strategy.OpExtend, func(l strategy.Lease) error { return l.Extend(ctx, 0) }, "acquired lost extended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &locktest.Recorder{}
			tech := &scripted{acquire: func(int) (engine.Acquired, error) { return engine.Acquired{Validity: validity}, nil }}
			l := newLocker(t, tech, strategy.Config{TTL: time.Second, Observer: rec})
			lease, err := l.TryLock(ctx, "k")
			if err != nil {
				t.Fatalf("TryLock() = %v, want nil", err)
			}
			for time.Now().Before(lease.Deadline()) {
				time.Sleep(validity)
			}
			if err := tt.call(lease); err != nil {
				t.Fatalf("%s() = %v, want nil", tt.op, err)
			}
			events := rec.Events()
			if got := locktest.Kinds(events); got != tt.want {
				t.Fatalf("events = %q, want %q", got, tt.want)
			}
			lost := events[1].Lost
			if lost.Op != tt.op || lost.Reason != strategy.LostDeadlinePassed || lost.Late <= 0 || lost.Err != nil || lost.Held < validity {
				t.Errorf("Lost = %+v, want Op %q, %v, Late > 0, no Err, Held >= %v", lost, tt.op, strategy.LostDeadlinePassed, validity)
			}
			if tt.op == strategy.OpUnlock && events[2].Released.NotHeld {
				t.Errorf("Released = %+v, want NotHeld false (the release succeeded)", events[2].Released)
			}
		})
	}
}

// TestObserverSilent: what is not an event reports nothing: bad input, an
// injected crash, an Unlock or Extend that failed to reach Redis (the
// lease is not spent), a second Unlock of a spent lease.
func TestObserverSilent(t *testing.T) {
	ctx := context.Background()
	crash := func(int) (engine.Acquired, error) { return engine.Acquired{}, fault.ErrCrashed }
	tests := []struct {
		name string
		tech engine.Technique
		cfg  strategy.Config
		run  func(t *testing.T, l *engine.Locker)
	}{
		{"empty key", &scripted{acquire: free}, strategy.Config{}, func(t *testing.T, l *engine.Locker) {
			if _, err := l.Lock(ctx, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
				t.Errorf("Lock(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
			}
		}},
		{"empty token", &scripted{acquire: free}, strategy.Config{Token: func() string { return "" }}, func(t *testing.T, l *engine.Locker) {
			if _, err := l.TryLock(ctx, "k"); !errors.Is(err, strategy.ErrInvalidConfig) {
				t.Errorf("TryLock() = %v, want %v", err, strategy.ErrInvalidConfig)
			}
		}},
		{"crash", &scripted{acquire: crash}, strategy.Config{}, func(t *testing.T, l *engine.Locker) {
			if _, err := l.Lock(ctx, "k"); !errors.Is(err, fault.ErrCrashed) {
				t.Errorf("Lock() = %v, want %v", err, fault.ErrCrashed)
			}
			if _, err := l.TryLock(ctx, "k"); !errors.Is(err, fault.ErrCrashed) {
				t.Errorf("TryLock() = %v, want %v", err, fault.ErrCrashed)
			}
		}},
		{"release fails", &releasing{&scripted{acquire: free}, errDown}, strategy.Config{}, func(t *testing.T, l *engine.Locker) {
			lease := mustTryLock(t, l)
			if err := lease.Unlock(ctx); !errors.Is(err, errDown) {
				t.Errorf("Unlock() = %v, want %v", err, errDown)
			}
		}},
		{"spent lease", &scripted{acquire: free}, strategy.Config{}, func(t *testing.T, l *engine.Locker) {
			lease := mustTryLock(t, l)
			if err := lease.Unlock(ctx); err != nil {
				t.Fatalf("Unlock() = %v, want nil", err)
			}
			if err := lease.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("second Unlock() = %v, want %v", err, strategy.ErrNotHeld)
			}
			if err := lease.Extend(ctx, 0); !errors.Is(err, strategy.ErrNotHeld) {
				t.Errorf("Extend() after Unlock = %v, want %v", err, strategy.ErrNotHeld)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &locktest.Recorder{}
			tt.cfg.Observer = rec
			l := newLocker(t, tt.tech, tt.cfg)
			tt.run(t, l)
			var got []locktest.Event
			for _, e := range rec.Events() { // the set-up's own events aside
				if e.Kind != locktest.KindAcquired && (e.Kind != locktest.KindReleased || tt.name != "spent lease") {
					got = append(got, e)
				}
			}
			if len(got) != 0 {
				t.Errorf("events = %q, want none", locktest.Kinds(got))
			}
		})
	}
}

// TestObserverClosed: a Lock that Close interrupts reports NotAcquired,
// closed, after its refused attempts.
func TestObserverClosed(t *testing.T) {
	rec := &locktest.Recorder{}
	tech := &scripted{acquire: held}
	l := newLocker(t, tech, strategy.Config{Retry: strategy.Fixed(time.Hour), Observer: rec})
	done := make(chan error, 1)
	go func() { // ends when Close interrupts the Lock
		_, err := l.Lock(context.Background(), "k")
		done <- err
	}()
	for tech.attempts.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if err := <-done; !errors.Is(err, strategy.ErrClosed) {
		t.Fatalf("Lock() = %v, want %v", err, strategy.ErrClosed)
	}
	events := rec.Events()
	if got := locktest.Kinds(events); got != "not-acquired" {
		t.Fatalf("events = %q, want %q", got, "not-acquired")
	}
	if e := events[0].NotAcquired; e.Reason != strategy.ReasonClosed || e.Attempts < 1 || e.Op != strategy.OpLock || e.LastFailure != nil {
		t.Errorf("NotAcquired = %+v, want %v, Op %q, >= 1 attempt, no LastFailure", e, strategy.ReasonClosed, strategy.OpLock)
	}
}

func mustTryLock(t *testing.T, l *engine.Locker) strategy.Lease {
	t.Helper()
	lease, err := l.TryLock(context.Background(), "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	return lease
}

// BenchmarkObserver measures what an observer costs the engine, apart
// from Redis (a technique that answers at once): Lock+Unlock and
// TryLock+Unlock without an observer ("nil") and with one that does
// nothing ("nop"). Compare ns/op and allocs/op of one run.
func BenchmarkObserver(b *testing.B) {
	observers := []struct {
		name string
		obs  strategy.Observer
	}{
		{"nil", nil},
		{"nop", strategy.NopObserver{}},
	}
	for _, o := range observers {
		l, err := engine.New(&scripted{acquire: free}, strategy.Properties{Name: "bench"}, strategy.Config{Observer: o.obs})
		if err != nil {
			b.Fatalf("New() = %v, want nil", err)
		}
		ctx := context.Background()
		calls := []struct {
			name string
			lock func(context.Context, string) (strategy.Lease, error)
		}{{"lock", l.Lock}, {"trylock", l.TryLock}}
		for _, c := range calls {
			b.Run(c.name+"/"+o.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					lease, err := c.lock(ctx, "k")
					if err != nil {
						b.Fatalf("%s() = %v, want nil", c.name, err)
					}
					if err := lease.Unlock(ctx); err != nil {
						b.Fatalf("Unlock() = %v, want nil", err)
					}
				}
			})
		}
	}
}

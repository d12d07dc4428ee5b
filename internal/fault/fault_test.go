package fault_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
)

func TestAtWithoutHook(t *testing.T) {
	if err := fault.At(context.Background(), "x"); err != nil {
		t.Errorf("At() without a hook = %v, want nil", err)
	}
}

func TestCrash(t *testing.T) {
	ctx := fault.With(context.Background(), fault.Crash("a"))
	if err := fault.At(ctx, "b"); err != nil {
		t.Errorf("At(b) = %v, want nil", err)
	}
	if err := fault.At(ctx, "a"); !errors.Is(err, fault.ErrCrashed) {
		t.Errorf("At(a) = %v, want %v", err, fault.ErrCrashed)
	}
}

func TestGate(t *testing.T) {
	g := fault.NewGate("p")
	ctx := fault.With(context.Background(), g.Hook)
	done := make(chan error, 1)
	go func() { done <- fault.At(ctx, "p") }()
	select {
	case <-g.Reached():
	case <-time.After(5 * time.Second):
		t.Fatal("Reached() never closed")
	}
	select {
	case err := <-done:
		t.Fatalf("At() returned %v before Open, want it blocked", err)
	case <-time.After(20 * time.Millisecond):
	}
	g.Open()
	g.Open() // idempotent
	if err := <-done; err != nil {
		t.Errorf("At() after Open = %v, want nil", err)
	}
}

func TestGateHonoursContext(t *testing.T) {
	g := fault.NewGate("p")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := fault.At(fault.With(ctx, g.Hook), "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("At() on a closed gate = %v, want %v", err, context.DeadlineExceeded)
	}
}

func TestChain(t *testing.T) {
	var order []string
	rec := func(name string) fault.Hook {
		return func(context.Context, string) error { order = append(order, name); return nil }
	}
	ctx := fault.With(context.Background(), fault.Chain(rec("1"), fault.Crash("p"), rec("2")))
	if err := fault.At(ctx, "p"); !errors.Is(err, fault.ErrCrashed) {
		t.Fatalf("At() = %v, want %v", err, fault.ErrCrashed)
	}
	if len(order) != 1 || order[0] != "1" {
		t.Errorf("hooks run = %v, want [1] (stop at the first error)", order)
	}
}

// BenchmarkAtNoHook is the cost of a fault point in production, where no
// hook is installed: compare it with the tens of microseconds of a
// Lock+Unlock round trip (BenchmarkLockUnlock in each technique).
func BenchmarkAtNoHook(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // a realistic chain
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := fault.At(ctx, fault.SetNXExReleaseAfterGet); err != nil {
			b.Fatal(err)
		}
	}
}

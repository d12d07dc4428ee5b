package redistest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
)

// Detached is a TB for code outside tests (cmd/lockcompare, the suite's
// Evaluate): Fatalf records the failure and ends the calling goroutine, as
// testing does, and cleanups run when Run returns. Create it with
// NewDetached; use each one for one Run.
type Detached struct {
	name     string
	mu       sync.Mutex
	failures []error
	cleanups []func()
}

// NewDetached returns a Detached named name (the name shows in container
// labels and temp dirs).
func NewDetached(name string) *Detached { return &Detached{name: name} }

// Helper does nothing.
func (d *Detached) Helper() {}

// Name returns the name given to NewDetached.
func (d *Detached) Name() string { return d.name }

// Logf discards the message.
func (d *Detached) Logf(string, ...any) {}

// Errorf records a failure.
func (d *Detached) Errorf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failures = append(d.failures, fmt.Errorf(format, args...))
}

// Fatalf records a failure and stops the calling goroutine.
func (d *Detached) Fatalf(format string, args ...any) {
	d.Errorf(format, args...)
	runtime.Goexit()
}

// Cleanup registers f to run when Run returns.
func (d *Detached) Cleanup(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cleanups = append(d.cleanups, f)
}

// TempDir returns a new directory removed when Run returns.
func (d *Detached) TempDir() string {
	dir, err := os.MkdirTemp("", "lockzoo-")
	if err != nil {
		d.Fatalf("temp dir: %v", err)
	}
	d.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Run calls f in its own goroutine, waits for it to return or stop (Fatalf),
// runs the registered cleanups last first (tearing down the nodes Start
// gave), and returns the failures recorded, nil when there were none.
func (d *Detached) Run(f func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	d.mu.Lock()
	cleanups := slices.Clone(d.cleanups)
	d.cleanups = nil
	d.mu.Unlock()
	for _, c := range slices.Backward(cleanups) {
		c()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return errors.Join(d.failures...)
}

var _ TB = (*Detached)(nil)

// Package background counts goroutines that do work in the background, so
// that a caller can wait for them to end (a Locker's Wait).
package background

import (
	"context"
	"sync"
)

// Tracker counts running background goroutines. Its zero value is ready.
type Tracker struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; nil while n is zero
}

// Add records k more goroutines; each calls Done when it ends.
func (b *Tracker) Add(k int) {
	if k == 0 {
		return
	}
	b.mu.Lock()
	if b.n == 0 {
		b.idle = make(chan struct{})
	}
	b.n += k
	b.mu.Unlock()
}

// Done records that one goroutine ended.
func (b *Tracker) Done() {
	b.mu.Lock()
	if b.n--; b.n == 0 {
		close(b.idle)
		b.idle = nil
	}
	b.mu.Unlock()
}

// Wait returns nil once no goroutine runs, or ctx's error if it ends first.
func (b *Tracker) Wait(ctx context.Context) error {
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

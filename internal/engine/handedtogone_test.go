package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy"
)

// passing is a HandOffer whose HandOff waits for the test's word before it
// answers with the lock it "took" for the waiter, and whose releases are
// recorded by value. Attempts after the holder's first fail (errDown)
// until handing is closed, then answer with waiter's.
type passing struct {
	handing chan struct{} // closed when HandOff has begun
	answer  chan struct{} // closed by the test: HandOff answers
	value   func(next engine.Attempt) string
	waiter  func(a engine.Attempt) (engine.Acquired, error)

	mu       sync.Mutex
	n        int
	released []string
}

func (p *passing) Acquire(_ context.Context, a engine.Attempt) (engine.Acquired, error) {
	p.mu.Lock()
	p.n++
	first := p.n == 1
	p.mu.Unlock()
	if first {
		return engine.Acquired{}, nil
	}
	select {
	case <-p.handing:
		return p.waiter(a)
	default:
		return engine.Acquired{}, errDown
	}
}

func (p *passing) Release(_ context.Context, h engine.Held) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = append(p.released, h.Value)
	return nil
}

func (p *passing) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, nil
}

func (p *passing) HandOff(_ context.Context, _ engine.Held, next engine.Attempt) (line.Passed, error) {
	close(p.handing)
	<-p.answer
	return line.Passed{Taken: true, Value: p.value(next), Fence: 9}, nil
}

var _ line.HandOffer = (*passing)(nil)

func (p *passing) attempts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *passing) releases() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.released)
}

// TestLocalHandOffToGoneWaiter: a local Unlock takes the lock for the head
// of its Locker's line (HandOffer), and the waiter has left the line by
// the time the hand-off reaches it.
//   - gave up, lock in its name: the waiter's attempts had only failed (it
//     was never refused, so never in a line in Redis), and its Lock gave
//     up; a lock in its name is nobody's and is released under that name;
//   - gave up, hand-off token: the same with a lock under a token of the
//     hand-off's own (redlock's), released under that token;
//   - took it itself: the waiter's own attempt found the lock in its name
//     (the technique answers its attempts with a lock handed to it) and
//     its Lock returned that lease: the hand-off is the same lock, and is
//     not released.
func TestLocalHandOffToGoneWaiter(t *testing.T) {
	tests := []struct {
		name      string
		token     bool // the hand-off's lock holds next.Token, not the waiter's name
		tookIt    bool // the waiter's own attempt takes the lock in its name
		wantFirst string
	}{
		{name: "gave up, lock in its name", wantFirst: "name"},
		{name: "gave up, hand-off token", token: true, wantFirst: "token"},
		{name: "took it itself", tookIt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			var next engine.Attempt
			p := &passing{
				handing: make(chan struct{}),
				answer:  make(chan struct{}),
				value: func(a engine.Attempt) string {
					next = a
					if tt.token {
						return a.Token
					}
					return a.Waiter
				},
				waiter: func(a engine.Attempt) (engine.Acquired, error) {
					if tt.tookIt {
						return engine.Acquired{Value: a.Waiter, Fence: 9}, nil
					}
					return engine.Acquired{}, errDown
				},
			}
			l := newLocker(t, p, strategy.Config{Retry: strategy.Fixed(time.Millisecond)})
			defer l.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			holder, err := l.Lock(ctx, "k")
			if err != nil {
				t.Fatalf("holder Lock() = %v, want nil", err)
			}
			wctx, giveUp := context.WithCancel(ctx)
			defer giveUp()
			type result struct {
				lease strategy.Lease
				err   error
			}
			waited := make(chan result, 1)
			go func() {
				lease, err := l.Lock(wctx, "k")
				waited <- result{lease, err}
			}()
			unlocked := make(chan error, 1)
			go func() {
				for p.attempts() < 2 { // the waiter attempts: it heads the line
					time.Sleep(time.Millisecond)
				}
				unlocked <- holder.Unlock(ctx)
			}()
			<-p.handing
			if !tt.tookIt {
				giveUp()
			}
			w := <-waited
			if tt.tookIt != (w.err == nil) {
				t.Fatalf("waiter Lock() = %v; want it to have the lock: %v", w.err, tt.tookIt)
			}
			if !tt.tookIt && !errors.Is(w.err, strategy.ErrNotAcquired) {
				t.Fatalf("waiter Lock() = %v, want %v", w.err, strategy.ErrNotAcquired)
			}
			close(p.answer)
			if err := <-unlocked; err != nil {
				t.Fatalf("holder Unlock() = %v, want nil", err)
			}
			// Only the hand-off's own lock counts: the waiter's failed
			// attempts are taken back under their own tokens (takeBack).
			got := slices.DeleteFunc(p.releases(), func(v string) bool { return v != next.Waiter && v != next.Token })
			var want []string
			switch tt.wantFirst {
			case "name":
				want = []string{next.Waiter}
			case "token":
				want = []string{next.Token}
			}
			if !slices.Equal(got, want) {
				t.Errorf("released %q after the hand-off, want %q", got, want)
			}
			if w.lease != nil {
				if err := w.lease.Unlock(ctx); err != nil {
					t.Errorf("waiter Unlock() = %v, want nil", err)
				}
			}
		})
	}
}

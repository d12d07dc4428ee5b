package fault

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrCrashed is returned from At when the hook makes the client "die" at a
// point. A technique returns it at once, leaving Redis exactly as it was at
// that point; Lock does not retry it.
var ErrCrashed = errors.New("lockzoo: client crashed at an injected fault point")

// Hook runs when a client reaches a fault point. Returning nil lets the
// client go on; returning an error wrapping ErrCrashed stops it there.
type Hook func(ctx context.Context, point string) error

type hookKey struct{}

// With returns a copy of ctx that carries h. Calls made with the returned
// context run h at every fault point they pass.
func With(ctx context.Context, h Hook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

// At runs the hook carried by ctx for point. It returns nil when ctx carries
// no hook or the hook lets the client go on, and the hook's error otherwise
// (an error wrapping ErrCrashed, or ctx.Err() when ctx ended while the hook
// was blocking).
func At(ctx context.Context, point string) error {
	h, ok := ctx.Value(hookKey{}).(Hook)
	if !ok {
		return nil
	}
	return h(ctx, point)
}

// Crash returns a Hook that makes the client die at point: At returns an
// error wrapping ErrCrashed there, and nil everywhere else.
func Crash(point string) Hook {
	return func(_ context.Context, p string) error {
		if p == point {
			return fmt.Errorf("%w: at %s", ErrCrashed, p)
		}
		return nil
	}
}

// Chain returns a Hook that runs hooks in order and stops at the first
// error.
func Chain(hooks ...Hook) Hook {
	return func(ctx context.Context, p string) error {
		for _, h := range hooks {
			if err := h(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}
}

// Gate blocks clients at one point until it is opened. Its zero value is not
// usable; create it with NewGate.
type Gate struct {
	point   string
	reached chan struct{}
	open    chan struct{}
	reach   sync.Once
	opened  sync.Once
}

// NewGate returns a closed Gate for point.
func NewGate(point string) *Gate {
	return &Gate{point: point, reached: make(chan struct{}), open: make(chan struct{})}
}

// Hook is the Gate's Hook: a client reaching the gate's point signals
// Reached and waits until Open is called or its context ends (then it
// returns ctx.Err()). Other points pass through.
func (g *Gate) Hook(ctx context.Context, p string) error {
	if p != g.point {
		return nil
	}
	g.reach.Do(func() { close(g.reached) })
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reached returns a channel closed when the first client reaches the gate.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Open lets every blocked client, and every later one, through. It is safe
// to call more than once.
func (g *Gate) Open() { g.opened.Do(func() { close(g.open) }) }

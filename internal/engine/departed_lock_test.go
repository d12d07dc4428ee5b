package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// abandoning is a scripted technique that keeps a line: its Abandon runs
// during, and its releases are recorded by value.
type abandoning struct {
	scripted
	during   func(a engine.Attempt)
	mu       sync.Mutex
	released []string
}

func (t *abandoning) Abandon(_ context.Context, a engine.Attempt) error {
	t.during(a)
	return nil
}

func (t *abandoning) Release(_ context.Context, h engine.Held) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.released = append(t.released, h.Value)
	return nil
}

// TestGaveUpReleasesHandOff: a lock a release in Redis hands to a waiter
// whose Lock is giving up is released under the waiter's name, whether the
// hand-off notice comes while the waiter is still in the local line (here,
// during its Abandon, which failed) or after it left; a hand-off to a name
// that never waited here is left alone.
func TestGaveUpReleasesHandOff(t *testing.T) {
	tests := []struct {
		name  string
		after bool // the notice comes after the Lock returned
		other bool // the notice names a waiter that never waited here
		want  bool // the lock is released under that name
	}{
		{name: "notice during the abandon", want: true},
		{name: "notice after the waiter left", after: true, want: true},
		{name: "notice for a stranger", after: true, other: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l *engine.Locker
			var waiter string
			handOff := func(key, name string) {
				engine.Notify(l, protocol.Channel(key), protocol.Notice{HandOff: true, Fence: 7, Waiter: name}.String())
			}
			// The Lock gives up after its first refusal (which its ctx
			// ends), not after a 20 ms ctx that a loaded machine could
			// spend before the first attempt, leaving no Abandon.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tech := &abandoning{scripted: scripted{acquire: func(n int) (engine.Acquired, error) {
				cancel()
				return held(n)
			}}}
			tech.during = func(a engine.Attempt) {
				waiter = a.Waiter
				if !tt.after {
					handOff(a.Key, a.Waiter)
				}
			}
			var err error
			l, err = engine.New(tech, strategy.Properties{Name: "test"}, strategy.Config{Retry: strategy.Fixed(time.Millisecond)}, engine.WithLine(time.Second))
			if err != nil {
				t.Fatalf("New() = %v, want nil", err)
			}
			defer l.Close()
			_, err = l.Lock(ctx, "k")
			require.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock()")
			require.NotEmpty(t, waiter, "the waiter's name: Lock gave up without Abandon")
			name := waiter
			if tt.other {
				name = "stranger"
			}
			rkey := tech.lastKey.Load().(string)
			if tt.after {
				handOff(rkey, name)
			}
			l.Close() // waits for a pass-on in the background
			tech.mu.Lock()
			defer tech.mu.Unlock()
			got := len(tech.released) == 1 && tech.released[0] == name
			if got != tt.want || len(tech.released) > 1 {
				t.Errorf("released %q after a hand-off to %q; want released under that name: %v", tech.released, name, tt.want)
			}
		})
	}
}

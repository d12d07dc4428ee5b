package line

import (
	"testing"
	"time"
)

// TestLinesNextAttempt: nextAttempt returns the head of the key's line and
// the attempt the head joined with, under a token of its own: the head's
// name + ".p" + how many attempts were made for it, counted per waiter
// (Attempt.Pass). An
// empty or unknown line returns nil.
func TestLinesNextAttempt(t *testing.T) {
	noLeaks(t)
	arrived := time.Unix(1700000000, 0)
	attemptOf := func(waiter string) Attempt {
		return Attempt{Key: "k", TTL: time.Minute, Waiter: waiter, Waits: true, Arrived: arrived, Locker: "L"}
	}
	type call struct {
		key        string
		wantWaiter string // "" for nil
		wantToken  string
		wantPass   uint64 // the attempt's number among the hand-offs' (Attempt.Pass)
	}
	tests := []struct {
		name    string
		waiters []string // joined to line "k" in this order
		leave   []string // then these leave
		calls   []call
	}{
		{
			name:  "empty line",
			calls: []call{{key: "k"}, {key: "k"}},
		},
		{
			name:    "unknown key",
			waiters: []string{"a"},
			calls:   []call{{key: "other"}},
		},
		{
			name:    "line emptied",
			waiters: []string{"a"},
			leave:   []string{"a"},
			calls:   []call{{key: "k"}},
		},
		{
			name:    "successive calls number the head's attempts",
			waiters: []string{"a"},
			calls: []call{
				{key: "k", wantWaiter: "a", wantToken: "a.p1", wantPass: 1},
				{key: "k", wantWaiter: "a", wantToken: "a.p2", wantPass: 2},
				{key: "k", wantWaiter: "a", wantToken: "a.p3", wantPass: 3},
			},
		},
		{
			name:    "only the head is named",
			waiters: []string{"a", "b"},
			calls: []call{
				{key: "k", wantWaiter: "a", wantToken: "a.p1", wantPass: 1},
				{key: "k", wantWaiter: "a", wantToken: "a.p2", wantPass: 2},
			},
		},
		{
			name:    "the next head counts from one",
			waiters: []string{"a", "b"},
			leave:   []string{"a"},
			calls: []call{
				{key: "k", wantWaiter: "b", wantToken: "b.p1", wantPass: 1},
				{key: "k", wantWaiter: "b", wantToken: "b.p2", wantPass: 2},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			joined := map[string]*Waiter{}
			turns := map[string]int{} // "try now" events a waiter got from becoming the head
			for _, name := range tt.waiters {
				joined[name] = q.join("k", name, attemptOf(name))
			}
			for _, name := range tt.leave {
				q.leave("k", joined[name], "")
			}
			for name, w := range joined {
				_, turns[name] = drainEvents(w)
			}
			for i, c := range tt.calls {
				w, a := q.nextAttempt(c.key)
				if c.wantWaiter == "" {
					if w != nil {
						t.Errorf("call %d: nextAttempt(%q) = waiter %q, want nil", i, c.key, w.Name())
					}
					if a != (Attempt{}) {
						t.Errorf("call %d: nextAttempt(%q) attempt = %+v, want the zero Attempt", i, c.key, a)
					}
					continue
				}
				if w == nil {
					t.Fatalf("call %d: nextAttempt(%q) = nil, want waiter %q", i, c.key, c.wantWaiter)
				}
				if w != joined[c.wantWaiter] {
					t.Errorf("call %d: nextAttempt(%q) = waiter %q, want %q", i, c.key, w.Name(), c.wantWaiter)
				}
				want := attemptOf(c.wantWaiter)
				want.Token, want.Pass = c.wantToken, c.wantPass
				if a != want {
					t.Errorf("call %d: nextAttempt(%q) attempt = %+v, want %+v", i, c.key, a, want)
				}
				if w.next.Token != "" {
					t.Errorf("call %d: waiter %q kept attempt token %q, want \"\" (each call makes its own)", i, w.Name(), w.next.Token)
				}
			}
			for name, w := range joined {
				offs, tries := drainEvents(w)
				if tries > turns[name] {
					t.Errorf("waiter %q was poked by nextAttempt, want no poke", name)
				}
				for _, h := range offs {
					t.Errorf("waiter %q got hand-off %+v from nextAttempt, want none", name, h)
				}
			}
		})
	}
}

package line

import (
	"slices"
	"testing"
	"time"
)

// TestLinesGive: (handOff) give hands the lock to a waiter that is still in the
// key's line, head or not, and reports true; it reports false, without
// blocking, for a waiter that left, a waiter of another key, or a waiter
// whose grant channel already holds a hand-off (which it keeps).
func TestLinesGive(t *testing.T) {
	noLeaks(t)
	start := time.Unix(1700000000, 0)
	first := handoff{value: "b.p1", fence: 7, start: start, valid: time.Second, local: true}
	second := handoff{value: "b.p2", fence: 8, start: start.Add(time.Second), valid: time.Second, local: true}
	type give struct {
		key  string
		to   string // "a" or "b", of line "k", or "c", of line "other"
		h    handoff
		want bool
	}
	tests := []struct {
		name  string
		leave []string // waiters that leave their line before the gives
		gives []give
		// the hand-offs each waiter finds on its grant channel afterwards
		wantA, wantB []handoff
	}{
		{
			name:  "head",
			gives: []give{{key: "k", to: "a", h: first, want: true}},
			wantA: []handoff{first},
		},
		{
			name:  "waiter behind the head",
			gives: []give{{key: "k", to: "b", h: first, want: true}},
			wantB: []handoff{first},
		},
		{
			name:  "waiter that left",
			leave: []string{"b"},
			gives: []give{{key: "k", to: "b", h: first, want: false}},
		},
		{
			name:  "head that left, the line still waiting",
			leave: []string{"a"},
			gives: []give{{key: "k", to: "a", h: first, want: false}},
		},
		{
			name:  "line emptied",
			leave: []string{"a", "b"},
			gives: []give{{key: "k", to: "b", h: first, want: false}},
		},
		{
			name:  "waiter of another key",
			gives: []give{{key: "k", to: "c", h: first, want: false}},
		},
		{
			name:  "key of another line",
			gives: []give{{key: "other", to: "b", h: first, want: false}},
		},
		{
			name: "grant channel full",
			gives: []give{
				{key: "k", to: "b", h: first, want: true},
				{key: "k", to: "b", h: second, want: false},
			},
			wantB: []handoff{first},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			ws := map[string]*Waiter{
				"a": q.join("k", "a", Attempt{Key: "k", Waiter: "a"}),
				"b": q.join("k", "b", Attempt{Key: "k", Waiter: "b"}),
				"c": q.join("other", "c", Attempt{Key: "other", Waiter: "c"}),
			}
			for _, name := range tt.leave {
				q.leave(ws[name].next.Key, ws[name], "")
			}
			for _, w := range ws {
				drainEvents(w) // turns from joining or from a head that left
			}
			for i, g := range tt.gives {
				if got := giveWithin(t, q, g.key, ws[g.to], g.h); got != g.want {
					t.Errorf("give %d: handOff(%q, %s, %+v) = %v, want %v", i, g.key, g.to, g.h, got, g.want)
				}
			}
			got := map[string][]handoff{}
			for name, w := range ws {
				offs, tries := drainEvents(w)
				got[name] = offs
				if tries > 0 {
					t.Errorf("waiter %s was poked by handOff, want no poke", name)
				}
			}
			if !slices.Equal(got["a"], tt.wantA) {
				t.Errorf("hand-offs to waiter a = %+v, want %+v", got["a"], tt.wantA)
			}
			if !slices.Equal(got["b"], tt.wantB) {
				t.Errorf("hand-offs to waiter b = %+v, want %+v", got["b"], tt.wantB)
			}
			if len(got["c"]) > 0 {
				t.Errorf("hand-offs to waiter c = %+v, want none", got["c"])
			}
		})
	}
}

// TestLinesGiveAfterNextAttempt: the sequence Unlock makes. The waiter
// nextAttempt named is given the lock when it is still in the line, and
// not once it has left, while a waiter that joined after it becomes the
// head and is named next.
func TestLinesGiveAfterNextAttempt(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		name      string
		leave     bool // the named waiter leaves between nextAttempt and give
		wantGiven bool
		wantNext  string // the token of the next attempt after give
	}{
		{name: "waiter still waiting", wantGiven: true, wantNext: "a.p2"},
		{name: "waiter left", leave: true, wantGiven: false, wantNext: "b.p1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			a := q.join("k", "a", Attempt{Key: "k", Waiter: "a"})
			b := q.join("k", "b", Attempt{Key: "k", Waiter: "b"})
			w, next := q.nextAttempt("k")
			if w != a || next.Token != "a.p1" {
				t.Fatalf("nextAttempt(%q) = waiter %v, token %q; want a, %q", "k", w, next.Token, "a.p1")
			}
			if tt.leave {
				q.leave("k", a, "")
			}
			h := handoff{value: next.Token, fence: 3, local: true}
			if got := giveWithin(t, q, "k", w, h); got != tt.wantGiven {
				t.Errorf("give(%q, a, %+v) = %v, want %v", "k", h, got, tt.wantGiven)
			}
			if got, _ := drainEvents(b); len(got) > 0 {
				t.Errorf("hand-offs to waiter b = %+v, want none", got)
			}
			if _, again := q.nextAttempt("k"); again.Token != tt.wantNext {
				t.Errorf("nextAttempt(%q) after give: token %q, want %q", "k", again.Token, tt.wantNext)
			}
		})
	}
}

// giveWithin calls q.handOff and fails the test when it does not return
// within a second.
func giveWithin(t *testing.T, q *lines, key string, w *Waiter, h handoff) bool {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- q.handOff(key, w, h) }()
	select {
	case ok := <-done:
		return ok
	case <-time.After(10 * time.Second):
		t.Fatalf("handOff(%q, %q, %+v) did not return within 10s", key, w.Name(), h)
		return false
	}
}

// TestLinesLeaveReturnsHandOff: as in x/sync/semaphore's Acquire, a waiter
// that gives up gets back, from leave, the hand-off it was sent and did not
// take, so that it can pass the lock on; nothing can be handed off to it
// once it has left.
func TestLinesLeaveReturnsHandOff(t *testing.T) {
	noLeaks(t)
	h := handoff{value: "a.p1", fence: 5, local: true}
	tests := []struct {
		name      string
		handOff   bool // the lock is handed off to a before it leaves
		wantOff   handoff
		wantHeard bool
	}{
		{name: "handed off meanwhile", handOff: true, wantOff: h, wantHeard: true},
		{name: "nothing handed off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			a := q.join("k", "a", Attempt{Key: "k", Waiter: "a"})
			b := q.join("k", "b", Attempt{Key: "k", Waiter: "b"})
			if tt.handOff && !q.handOff("k", a, h) {
				t.Fatalf("handOff(%q, a) = false, want true", "k")
			}
			off, handedOff, unsubscribe := q.leave("k", a, "")
			if off != tt.wantOff || handedOff != tt.wantHeard || unsubscribe {
				t.Errorf("leave(%q, a) = %+v, %v, %v; want %+v, %v, false", "k", off, handedOff, unsubscribe, tt.wantOff, tt.wantHeard)
			}
			if q.handOff("k", a, h) {
				t.Errorf("handOff(%q, a) after a left = true, want false", "k")
			}
			if offs, tries := drainEvents(b); len(offs) > 0 || tries != 1 {
				t.Errorf("b after the head left: hand-offs %+v and %d \"try now\", want none and 1 (its turn)", offs, tries)
			}
		})
	}
}

// TestWaiterEvents: a waiter's one events channel keeps at most one event:
// a hand-off replaces a pending "try now" and is never replaced itself; a
// "try now" raised before the waiter's latest attempt began is stale.
func TestWaiterEvents(t *testing.T) {
	noLeaks(t)
	q := newLines()
	w := q.join("k", "a", Attempt{Key: "k", Waiter: "a"}) // its turn is pending
	w.tries.Add(1)                                        // the attempt its turn started
	q.poke("k", "")                                       // raised during that attempt
	e := <-w.events
	if e.handedOff || e.stale(w) {
		t.Errorf("poke during the attempt = %+v (stale %v), want a fresh \"try now\"", e, e.stale(w))
	}
	q.poke("k", "")
	w.tries.Add(1) // the next attempt began after the poke
	if e := <-w.events; !e.stale(w) {
		t.Errorf("poke before the latest attempt = %+v, want stale", e)
	}
	q.poke("k", "")
	h := handoff{value: "a", fence: 9}
	q.handOffByName("k", "a", 9)
	q.poke("k", "")
	offs, tries := drainEvents(w)
	if !slices.Equal(offs, []handoff{h}) || tries != 0 {
		t.Errorf("after poke, hand-off, poke: hand-offs %+v and %d \"try now\", want [%+v] and 0", offs, tries, h)
	}
}

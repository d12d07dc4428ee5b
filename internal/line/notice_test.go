package line

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// noLeaks checks, when t ends, that no goroutine outlived the test.
// locktest.NoLeaks cannot be used here: locktest imports this package
// (through internal/bench), so this internal test would form an import
// cycle.
func noLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// TestLinesGrant: a grant reaches only the waiter it names, wherever that
// waiter stands in the key's line; a grant for a name or key with no
// waiter does nothing, and none blocks.
func TestLinesGrant(t *testing.T) {
	noLeaks(t)
	type grant struct {
		key, target string
		fence       uint64
	}
	tests := []struct {
		name   string
		grants []grant
		// the fences each waiter of line "k" receives: first (the head,
		// named "a") and second ("b")
		wantA, wantB []uint64
	}{
		{
			name:   "second waiter",
			grants: []grant{{key: "k", target: "b", fence: 7}},
			wantB:  []uint64{7},
		},
		{
			name:   "head",
			grants: []grant{{key: "k", target: "a", fence: 3}},
			wantA:  []uint64{3},
		},
		{
			name:   "unknown waiter",
			grants: []grant{{key: "k", target: "nobody", fence: 7}},
		},
		{
			name:   "unknown key",
			grants: []grant{{key: "other", target: "b", fence: 7}},
		},
		{
			name:   "waiter name is matched whole",
			grants: []grant{{key: "k", target: "b.1", fence: 7}, {key: "k", target: "", fence: 8}},
		},
		{
			name:   "a second grant to a waiter that has not taken the first does not block",
			grants: []grant{{key: "k", target: "b", fence: 7}, {key: "k", target: "b", fence: 8}},
			wantB:  []uint64{7},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			a := q.join("k", "a", Attempt{})
			b := q.join("k", "b", Attempt{})
			if _, tries := drainEvents(a); tries != 1 {
				t.Fatalf("head a after join: %d \"try now\" events, want 1 (its turn)", tries)
			}
			for _, g := range tt.grants {
				grantWithin(t, q, g.key, g.target, g.fence)
			}
			offsA, triesA := drainEvents(a)
			offsB, triesB := drainEvents(b)
			if got := fences(offsA); !slices.Equal(got, tt.wantA) {
				t.Errorf("grants to waiter a = %v, want %v", got, tt.wantA)
			}
			if got := fences(offsB); !slices.Equal(got, tt.wantB) {
				t.Errorf("grants to waiter b = %v, want %v", got, tt.wantB)
			}
			if triesA > 0 {
				t.Errorf("waiter a was poked by a grant, want no poke")
			}
			if triesB > 0 {
				t.Errorf("waiter b was poked (or got the turn) from a grant, want a to stay the head, no poke")
			}
		})
	}
}

// TestLinesOnNoticeRoutesGrant: a "handoff:" notice body reaches the waiter it
// names through onNotice; a malformed one pokes the head instead.
func TestLinesOnNoticeRoutesGrant(t *testing.T) {
	noLeaks(t)
	tests := []struct {
		name         string
		body         string
		wantGrantB   []uint64
		wantPokeHead bool
	}{
		{name: "handoff", body: "handoff:9:b", wantGrantB: []uint64{9}},
		{name: "malformed grant pokes the head", body: "handoff:x:b", wantPokeHead: true},
		{name: "head notice for another waiter", body: "head:b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newLines()
			a := q.join("k", "a", Attempt{})
			b := q.join("k", "b", Attempt{})
			drainEvents(a) // its turn, from join
			q.onNotice("k", protocol.ParseNotice(tt.body))
			offsA, triesA := drainEvents(a)
			offsB, _ := drainEvents(b)
			if got := fences(offsB); !slices.Equal(got, tt.wantGrantB) {
				t.Errorf("onNotice(%q): grants to waiter b = %v, want %v", tt.body, got, tt.wantGrantB)
			}
			if got := fences(offsA); len(got) > 0 {
				t.Errorf("onNotice(%q): grants to waiter a = %v, want none", tt.body, got)
			}
			poked := triesA > 0
			if poked != tt.wantPokeHead {
				t.Errorf("onNotice(%q): head poked = %v, want %v", tt.body, poked, tt.wantPokeHead)
			}
		})
	}
}

// grantWithin calls q.handOffByName and fails the test when it does not
// return within 10 s: it never blocks, so only a hang takes that long,
// even on a loaded machine.
func grantWithin(t *testing.T, q *lines, key, target string, fence uint64) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.handOffByName(key, target, fence)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("handOffByName(%q, %q, %d) did not return within 10s", key, target, fence)
	}
}

// drainEvents returns, without blocking, the hand-offs waiting on w's
// events channel and how many "try now" events wait there.
func drainEvents(w *Waiter) (offs []handoff, tries int) {
	for {
		select {
		case e := <-w.events:
			if e.handedOff {
				offs = append(offs, e.off)
			} else {
				tries++
			}
		default:
			return offs, tries
		}
	}
}

// fences returns the fencing tokens of offs.
func fences(offs []handoff) []uint64 {
	var got []uint64
	for _, h := range offs {
		got = append(got, h.fence)
	}
	return got
}

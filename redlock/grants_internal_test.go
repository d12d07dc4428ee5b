package redlock

import (
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/protocol"
)

// TestGrantCountsOnlySettledNodes replays, step by step on 3 nodes
// (quorum 2), what grants does with a waiter's answers and the nodes'
// hand-offs, and when it decides: a hand-off counts only from a node that
// refused the latest attempt with a smaller counter, whose other requests
// from the Lock call have all been answered, none of them late with a
// vote that may hold the lock (it may have taken the copy). The waiter is
// not in the engine's line, so a decision shows as its state leaving
// grants (the lock is passed on).
func TestGrantCountsOnlySettledNodes(t *testing.T) {
	_, l, wait := startLocker(t, 3, Config{NodeTimeout: time.Hour})
	tq := l.t
	rkey := protocol.LockKey("lock:", "k")
	attempt := func(try int) engine.Attempt {
		a := engine.Attempt{Key: rkey, Waiter: "w", TTL: time.Minute, Waits: true}
		a.SetTry(uint64(try)) // token "w.<try>"
		return a
	}
	refused := answer{vote: voteNo, queued: true, fenceSeen: 10}
	mayHold := answer{vote: voteYes, mayHold: true, counter: 11}
	var late grantAttempt // attempt 1, answered late
	decided := func() bool {
		tq.grants.mu.Lock()
		defer tq.grants.mu.Unlock()
		return tq.grants.byWaiter["w"] == nil
	}
	steps := []struct {
		name        string
		do          func()
		wantDecided bool
	}{
		{"attempt 1 answered by node 1 only", func() {
			a1 := tq.beginGrant(attempt(1), time.Now())
			tq.answeredGrant(a1, 1, refused)
			a2 := tq.beginGrant(attempt(2), time.Now())
			for i := range 3 {
				tq.answeredGrant(a2, i, refused)
			}
			late = a1 // its requests to nodes 0 and 2 are still on their way
		}, false},
		{"hand-offs from every node: only node 1 is settled", func() {
			for i := range 3 {
				tq.NodeHandOff(i, rkey, "w", 11)
			}
		}, false},
		{"attempt 1's late yes on node 2: tainted", func() { tq.answeredGrant(late, 2, mayHold) }, false},
		{"attempt 1's late refusal on node 0: nodes 0 and 1 count", func() { tq.answeredGrant(late, 0, answer{vote: voteNo}) }, true},
	}
	for _, s := range steps {
		s.do()
		if got := decided(); got != s.wantDecided {
			t.Fatalf("after %s: decided = %v, want %v", s.name, got, s.wantDecided)
		}
	}
	wait()
}

package redlock

import (
	"context"
	"errors"
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestTally checks the decision rules on 5 nodes with a quorum of 3.
func TestTally(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		name                      string
		votes                     []vote
		won, lost, refused, freed bool
	}{
		{"nothing yet", nil, false, false, false, false},
		{"three yes", []vote{voteYes, voteYes, voteYes}, true, false, false, true},
		{"two yes, one no, two pending", []vote{voteYes, voteYes, voteNo}, false, false, false, true},
		{"three no", []vote{voteNo, voteNo, voteNo}, false, true, true, false},
		{"two no and an excluded", []vote{voteNo, voteNo, voteExcluded}, false, true, true, false},
		{"split 2-2-1", []vote{voteYes, voteYes, voteNo, voteNo, voteFailed}, false, true, false, true},
		{"one no, two failed", []vote{voteNo, voteFailed, voteFailed}, false, true, false, false},
		{"two yes, three failed", []vote{voteYes, voteYes, voteFailed, voteFailed, voteFailed}, false, true, false, false},
		{"one yes, three no", []vote{voteYes, voteNo, voteNo, voteNo}, false, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTally(5, 3)
			for i, v := range tt.votes {
				tl.add(answer{node: i, vote: v, err: errors.New("boom")})
			}
			if got := tl.won(); got != tt.won {
				t.Errorf("won() = %v, want %v (%s)", got, tt.won, &tl)
			}
			if got := tl.lost(); got != tt.lost {
				t.Errorf("lost() = %v, want %v (%s)", got, tt.lost, &tl)
			}
			if got := tl.refusedByQuorum(); got != tt.refused {
				t.Errorf("refusedByQuorum() = %v, want %v (%s)", got, tt.refused, &tl)
			}
			if got := tl.released(); got != tt.freed {
				t.Errorf("released() = %v, want %v (%s)", got, tt.freed, &tl)
			}
		})
	}
}

// TestTallyHeardEverywhere: a refused waiter keeps its place for
// LineListened only when every node that answered refused it and saw its
// Locker listening.
func TestTallyHeardEverywhere(t *testing.T) {
	locktest.NoLeaks(t)
	no, heard := answer{vote: voteNo}, answer{vote: voteNo, listened: true}
	tests := []struct {
		name    string
		answers []answer
		want    bool
	}{
		{"nothing yet", nil, false},
		{"three refusals that heard, two pending", []answer{heard, heard, heard}, true},
		{"five refusals that heard", []answer{heard, heard, heard, heard, heard}, true},
		{"one refusal did not hear", []answer{heard, heard, no}, false},
		{"a yes among them", []answer{heard, heard, heard, {vote: voteYes}}, false},
		{"a failed node among them", []answer{heard, heard, heard, {vote: voteFailed, err: errors.New("boom")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTally(5, 3)
			for i, a := range tt.answers {
				a.node = i
				tl.add(a)
			}
			if got := tl.heardEverywhere(); got != tt.want {
				t.Errorf("heardEverywhere() = %v, want %v (%s, %d heard)", got, tt.want, &tl, tl.listened)
			}
		})
	}
}

// TestTallyFailure checks which sentinel a lost round's error wraps.
func TestTallyFailure(t *testing.T) {
	locktest.NoLeaks(t)
	refused := newTally(5, 3)
	failed := newTally(5, 3)
	for i := range 3 {
		refused.add(answer{node: i, vote: voteNo})
		failed.add(answer{node: i, vote: voteFailed, err: context.DeadlineExceeded})
	}
	if err := refused.failure("op", strategy.ErrNotAcquired, nil); !errors.Is(err, strategy.ErrNotAcquired) {
		t.Errorf("failure() of three refusals = %v, want %v", err, strategy.ErrNotAcquired)
	}
	err := failed.failure("op", strategy.ErrNotAcquired, nil)
	if errors.Is(err, strategy.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("failure() of three timeouts = %v, want %v and not %v", err, context.DeadlineExceeded, strategy.ErrNotAcquired)
	}
	if err := refused.failure("op", strategy.ErrNotAcquired, context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("failure() with a cause = %v, want %v", err, context.Canceled)
	}
}

package redlock

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/lockerr"
)

// vote is what one node said to one request.
type vote int

const (
	voteYes      vote = iota + 1 // did what was asked
	voteNo                       // the key is someone else's, or missing
	voteExcluded                 // a yes the restart guard leaves out: a refusal
	voteFailed                   // no usable answer
)

// answer is one node's reply to one request.
type answer struct {
	node      int
	vote      vote
	err       error         // for voteFailed; explains voteExcluded
	mayHold   bool          // its SET succeeded or may have: undo it on failure
	counter   int64         // a yes's fencing counter after its INCR
	remaining time.Duration // the holder's PTTL on a refusal; 0: unknown
	prev      prevState     // for a hand-off: the earlier holder's lock
	listened  bool          // a refusal whose node saw the waiter's Locker listening
	queued    bool          // a refusal that queued the waiter, with the
	fenceSeen int64         // node's fencing counter then (-1: none), for grants
}

type prevState int8

const (
	prevUnknown prevState = iota // no usable answer, or not a hand-off
	prevDeleted                  // the node held it and deleted it
	prevAbsent                   // the node did not hold it
)

// tally counts one round's answers against the quorum.
type tally struct {
	n, quorum         int
	yes               int
	refused           int // voteNo and voteExcluded
	failed            int
	excluded          int
	errs              []error
	granted           []bool        // by node: its SET succeeded; nil until one did
	counters          []int64       // by node: a yes-voter's fencing counter; nil until one
	top               int64         // the largest of counters
	busy              time.Duration // the shortest remaining TTL refusals reported
	listened          int           // refusals with answer.listened
	handed, notHanded int           // for a hand-off: nodes that deleted the earlier lock, that did not hold it
}

func newTally(n, quorum int) tally { return tally{n: n, quorum: quorum} }

func (t *tally) add(a answer) {
	switch a.prev {
	case prevDeleted:
		t.handed++
	case prevAbsent:
		t.notHanded++
	}
	if a.mayHold && (a.vote == voteYes || a.vote == voteExcluded) { // an acquire's SET
		if t.granted == nil {
			t.granted = make([]bool, t.n)
		}
		t.granted[a.node] = true
	}
	if a.vote == voteYes && a.counter > 0 {
		if t.counters == nil {
			t.counters = make([]int64, t.n)
		}
		t.counters[a.node], t.top = a.counter, max(t.top, a.counter)
	}
	switch a.vote {
	case voteYes:
		t.yes++
	case voteNo:
		t.refused++
		if a.remaining > 0 && (t.busy == 0 || a.remaining < t.busy) {
			t.busy = a.remaining
		}
		if a.listened {
			t.listened++
		}
	case voteExcluded:
		t.refused++
		t.excluded++
	default:
		t.failed++
		t.errs = append(t.errs, fmt.Errorf("node %d: %w", a.node, a.err))
	}
}

// pending returns how many nodes have not answered yet.
func (t *tally) pending() int { return t.n - t.yes - t.refused - t.failed }

// won reports that a quorum said yes.
func (t *tally) won() bool { return t.yes >= t.quorum }

// lost reports that a quorum can no longer say yes.
func (t *tally) lost() bool { return t.yes+t.pending() < t.quorum }

// refusedByQuorum reports that refusals alone rule out a quorum ("held by
// someone else" or "not ours", rather than "nodes failed").
func (t *tally) refusedByQuorum() bool { return t.refused > t.n-t.quorum }

// heardEverywhere reports, for a refused acquire, that every node that
// answered refused it and saw the waiter's Locker listening.
func (t *tally) heardEverywhere() bool {
	return t.listened > 0 && t.listened == t.n-t.pending()
}

// released reports, for a release round, that a node deleted the lock and
// fewer than a quorum may still hold it.
func (t *tally) released() bool { return t.yes > 0 && t.yes+t.refused > t.n-t.quorum }

func (t *tally) String() string {
	s := fmt.Sprintf("%d of %d nodes said yes (quorum %d), %d no", t.yes, t.n, t.quorum, t.refused)
	if t.excluded > 0 {
		s += fmt.Sprintf(" (%d left out by the restart guard)", t.excluded)
	}
	if t.failed > 0 {
		s += fmt.Sprintf(", %d failed", t.failed)
	}
	if p := t.pending(); p > 0 {
		s += fmt.Sprintf(", %d not answered", p)
	}
	return s
}

// failure is the error of a round without a quorum: it wraps cause, else
// refusal when refusals ruled the quorum out, and the nodes' failures.
func (t *tally) failure(op string, refusal, cause error) error {
	var parts []error
	if cause != nil {
		parts = append(parts, cause)
	} else if t.refusedByQuorum() {
		parts = append(parts, refusal)
	}
	if parts = append(parts, t.errs...); len(parts) == 0 {
		parts = append(parts, errNoQuorum) // cannot happen: a lost round has refusals or failures
	}
	if len(parts) == 1 {
		return fmt.Errorf("%s: %s: %w", op, t.String(), parts[0])
	}
	return fmt.Errorf("%s: %s: %w", op, t.String(), lockerr.Joined(parts))
}

var (
	errNoQuorum  = errors.New("no quorum")
	errValidity  = errors.New("quorum reached after the lock's validity ran out")
	errRestarted = errors.New("node restarted recently; the restart guard leaves it out of quorums for one TTL")
)

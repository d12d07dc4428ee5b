package redlock

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// vote is what one node said to one request.
type vote int

const (
	// voteYes: the node did what was asked (SET NX succeeded, the compare
	// script matched our token).
	voteYes vote = iota + 1
	// voteNo: the node answered no (the key is someone else's, or missing).
	voteNo
	// voteExcluded: the node answered, but the restart guard leaves it out
	// of quorums for now; it counts as a refusal.
	voteExcluded
	// voteFailed: no usable answer (dial error, timeout, error reply).
	voteFailed
)

// answer is one node's reply to one request.
type answer struct {
	node int
	vote vote
	err  error // set for voteFailed, and explains voteExcluded
	// mayHold reports that the node may now hold the lock for this
	// attempt: its SET succeeded, or the outcome is unknown. A failed
	// acquire releases such nodes.
	mayHold bool
	// counter is, for an acquire's yes, the node's fencing counter after
	// the INCR that came with the SET (0 elsewhere).
	counter int64
	// remaining is, for an acquire's no, how long the holder's lock has
	// left on the node (PTTL); 0 when unknown or the key has no expiry.
	remaining time.Duration
	// prev is, for an acquire that also released an earlier holder's lock
	// (a hand-off, see HandOff), whether the node deleted that lock.
	prev prevState
	// listened is, for an acquire's no to a waiter, that the node saw the
	// waiter's Locker listening on its inbox there, so that its line keeps
	// the waiter's place for LineListened.
	listened bool
	// queued is, for an acquire's no to a waiter, that the node queued it
	// (a refusal because the lock is someone else's or kept for an earlier
	// waiter), and fenceSeen the node's fencing counter then (-1: none),
	// for grants.
	queued    bool
	fenceSeen int64
}

// prevState is what a node's answer says of the earlier holder's lock in a
// hand-off.
type prevState int8

const (
	prevUnknown prevState = iota // no usable answer, or not a hand-off
	prevDeleted                  // the node held it and deleted it
	prevAbsent                   // the node did not hold it
)

// tally counts the answers of one round against the quorum.
type tally struct {
	n, quorum int
	yes       int
	refused   int // voteNo and voteExcluded
	failed    int
	excluded  int
	errs      []error
	// granted marks, by node index, the nodes whose SET succeeded (yes or
	// excluded votes); nil until the first one.
	granted []bool
	// counters holds, by node index, the fencing counter each yes-voter of
	// an acquire returned (0: none); nil until the first one.
	counters []int64
	// busy is the shortest remaining TTL among the nodes that refused an
	// acquire because the key is held; 0 when none reported one.
	busy time.Duration
	// listened counts the refusals whose node saw the waiter's Locker
	// listening (answer.listened).
	listened int
	// handed and notHanded count, for a hand-off, the nodes that deleted
	// the earlier holder's lock and those that did not hold it.
	handed, notHanded int
}

func newTally(n, quorum int) tally { return tally{n: n, quorum: quorum} }

func (t *tally) add(a answer) {
	switch a.prev {
	case prevDeleted:
		t.handed++
	case prevAbsent:
		t.notHanded++
	}
	if a.vote == voteYes || a.vote == voteExcluded {
		if t.granted == nil {
			t.granted = make([]bool, t.n)
		}
		t.granted[a.node] = true
	}
	if a.vote == voteYes && a.counter > 0 {
		if t.counters == nil {
			t.counters = make([]int64, t.n)
		}
		t.counters[a.node] = a.counter
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

// refusedByQuorum reports that refusals alone rule out a quorum: more than
// n-quorum nodes said no. That is "held by someone else" (or "not ours"),
// as opposed to "could not tell because nodes failed".
func (t *tally) refusedByQuorum() bool { return t.refused > t.n-t.quorum }

// heardEverywhere reports, for a refused acquire, that every node that
// answered before the decision refused it and saw the waiter's Locker
// listening, so that their lines keep the waiter's place for
// LineListened. A node that said yes (and put the waiter back in line with
// the undo) or failed did not say; a node that answers after the decision
// does not count (at worst it drops the waiter after LineStale, and the
// waiter joins it again, in its ticket's place, at its next attempt).
func (t *tally) heardEverywhere() bool {
	return t.listened > 0 && t.listened == t.n-t.pending()
}

// released reports, for a release round, that the lock is gone even
// without a quorum of deletions: a node deleted it, and the nodes that may
// still hold the token (failed or not answered) are fewer than a quorum.
func (t *tally) released() bool { return t.yes > 0 && t.yes+t.refused > t.n-t.quorum }

// String summarises the tally for error messages.
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

// failure builds the error of a round that did not reach its quorum.
// refusal is the sentinel to wrap when refusals alone ruled the quorum out
// (ErrNotAcquired for acquire, ErrNotHeld for release and extend); cause is
// a context error or errValidity, or nil.
func (t *tally) failure(op string, refusal, cause error) error {
	var parts []error
	if cause != nil {
		parts = append(parts, cause)
	} else if t.refusedByQuorum() {
		parts = append(parts, refusal)
	}
	parts = append(parts, t.errs...)
	if len(parts) == 0 {
		// Cannot happen: a lost round has refusals or failures.
		parts = append(parts, errNoQuorum)
	}
	if len(parts) == 1 {
		return fmt.Errorf("%s: %s: %w", op, t.String(), parts[0])
	}
	return fmt.Errorf("%s: %s: %w", op, t.String(), joined(parts))
}

// joined is errors.Join on one line: its parts separated by "; ".
type joined []error

func (j joined) Error() string {
	s := make([]string, len(j))
	for i, err := range j {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (j joined) Unwrap() []error { return j }

var (
	// errNoQuorum is the cause of a round that ended without a quorum and
	// without any more specific reason.
	errNoQuorum = errors.New("no quorum")
	// errValidity reports a quorum reached too late: the time it took left
	// no validity (see Config.DriftFactor).
	errValidity = errors.New("quorum reached after the lock's validity ran out")
)

// acquireVote turns an acquire script's reply into a vote, applying the
// restart guard.
func (t *technique) acquireVote(n *node, reply any, err error) answer {
	if err != nil {
		// The SET may have run before the failure, unless it was never
		// sent: release it if the round fails.
		return answer{vote: voteFailed, err: err, mayHold: !errors.Is(err, redisconn.ErrNotSent)}
	}
	v, ok := acquireReply(reply)
	if !ok {
		return answer{vote: voteFailed, err: fmt.Errorf("acquire script replied %v", reply), mayHold: true}
	}
	switch v[0] {
	case 1:
	case 0, 2:
		var remaining time.Duration
		if v[1] >= 0 { // -1: the holder's key has no expiry
			remaining = time.Duration(max(v[1], 1)) * time.Millisecond
		}
		if v[0] == 2 {
			// A token of this Lock call the script does not take over:
			// this attempt's own, left by its undo racing it (its release
			// runs within NodeTimeout or so, and publishes no notice), a
			// later attempt's (this request came late: the round is
			// decided already) or a hand-off's. An earlier attempt's token
			// is taken over by the script.
			if remaining == 0 || remaining > t.s.nodeTimeout {
				remaining = t.s.nodeTimeout
			}
		}
		queued := v[0] == 0 && v[4] != noRefusal
		return answer{vote: voteNo, remaining: remaining, prev: prevOf(v[2]), listened: v[0] == 0 && v[3] == 1, queued: queued, fenceSeen: v[4]}
	default:
		return answer{vote: voteFailed, err: fmt.Errorf("acquire script replied %v", reply), mayHold: true}
	}
	if t.s.guard && n.excluded(t.clock.now()) {
		return answer{vote: voteExcluded, err: errRestarted, mayHold: true, prev: prevOf(v[2])}
	}
	return answer{vote: voteYes, mayHold: true, counter: v[1], prev: prevOf(v[2])}
}

// prevOf reads the acquire script's "released" flag.
func prevOf(released int64) prevState {
	if released == 1 {
		return prevDeleted
	}
	return prevAbsent
}

// acquireReply reads an acquire script's reply as {status, n, released,
// listened, fence seen}: the fencing counter alone (the uncontended
// path's reply) is {1, counter, 0, 0, noRefusal}, and a shorter reply has
// listened 0 and, fifth, noRefusal (only a refusal to a waiter carries
// the counter).
func acquireReply(reply any) ([5]int64, bool) {
	out := [5]int64{4: noRefusal}
	if f, ok := reply.(int64); ok {
		out[0], out[1] = 1, f
		return out, true
	}
	v, ok := reply.([]any)
	if !ok || len(v) < 3 || len(v) > len(out) {
		return out, false
	}
	for i, x := range v {
		if out[i], ok = x.(int64); !ok {
			return out, false
		}
	}
	return out, true
}

// errRestarted explains an excluded vote.
var errRestarted = errors.New("node restarted recently; the restart guard leaves it out of quorums for one TTL")

package redlock

import (
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

//go:embed acquire.lua
var acquireSource string // its reply: readAcquire

// acquireVote reads acquire.lua's reply as a vote, with the restart guard.
func (t *technique) acquireVote(n *node, reply any, err error) answer {
	if err != nil {
		// The SET may have run, unless it was never sent.
		return answer{vote: voteFailed, err: err, mayHold: !errors.Is(err, redisconn.ErrNotSent)}
	}
	v, ok := readAcquire(reply)
	switch {
	case !ok || v.status < 0 || v.status > 2:
		return answer{vote: voteFailed, err: fmt.Errorf("acquire script replied %v", reply), mayHold: true}
	case v.status != 1:
		var remaining time.Duration
		if v.n >= 0 { // -1: the holder's key has no expiry
			remaining = time.Duration(max(v.n, 1)) * time.Millisecond
		}
		if v.status == 2 && (remaining == 0 || remaining > t.cfg.NodeTimeout) {
			// A token of this Lock call not taken over (this attempt's
			// own left by its undo, a later attempt's, a hand-off's): it is
			// released within about NodeTimeout.
			remaining = t.cfg.NodeTimeout
		}
		queued := v.status == 0 && v.fenceSeen != noRefusal
		return answer{vote: voteNo, remaining: remaining, prev: prevOf(v.released), listened: v.status == 0 && v.listened == 1, queued: queued, fenceSeen: v.fenceSeen}
	case t.excluded(n):
		return answer{vote: voteExcluded, err: errRestarted, mayHold: true, prev: prevOf(v.released)}
	}
	return answer{vote: voteYes, mayHold: true, counter: v.n, prev: prevOf(v.released)}
}

// prevOf reads the acquire script's "released" flag.
func prevOf(released int64) prevState {
	if released == 1 {
		return prevDeleted
	}
	return prevAbsent
}

// acquireReply is acquire.lua's reply: status 1 taken (n: the counter), 0
// refused, 2 refused by a token of this Lock call (n: the holder's PTTL,
// -1 without expiry); released, listened: 1 or 0; fenceSeen: the counter
// a refusal that queued the waiter saw, else noRefusal.
type acquireReply struct{ status, n, released, listened, fenceSeen int64 }

// readAcquire decodes acquire.lua's reply (a bare counter, or an array of
// 3 to 5); it reports false for any other shape.
func readAcquire(reply any) (acquireReply, bool) {
	out := acquireReply{fenceSeen: noRefusal}
	if f, ok := reply.(int64); ok {
		out.status, out.n = 1, f
		return out, true
	}
	v, ok := reply.([]any)
	if !ok || len(v) < 3 || len(v) > 5 {
		return out, false
	}
	fields := [...]*int64{&out.status, &out.n, &out.released, &out.listened, &out.fenceSeen}
	for i, x := range v {
		if *fields[i], ok = x.(int64); !ok {
			return out, false
		}
	}
	return out, true
}

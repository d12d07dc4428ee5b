package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Stale is how long a waiter in Lock may go without an attempt before it
// loses its place in the line. The engine makes a waiter attempt at least
// every Stale/2, whatever its Retry policy, so a live waiter keeps it (and
// a lua_release waiter that listens for notices attempts no more often).
const Stale = 250 * time.Millisecond

// Listened is how long a lua_release waiter whose Locker listens on its
// inbox on the lock's node (PUBSUB NUMSUB counts a subscriber there) may
// go without an attempt before it loses its place in the line. Such a
// waiter sleeps until a notice or a hand-off reaches it, or Listened/2
// passes (it keeps its place and catches a lost notice), so waiting costs
// Redis one attempt per waiter per Listened/2. A waiter whose Locker does
// not listen there keeps Stale. Listened is also the longest a frozen
// process's waiter (its connections still open) holds a free lock back,
// and the basis of lua_release's line expiry (4 × Listened).
const Listened = time.Second

// HandOffRecent is how recently the head of the line must have made an
// attempt for lua_release's release to hand it the lock directly without
// asking PUBSUB NUMSUB whether its Locker listens on its inbox; a head not
// seen that recently is handed the lock when it listens, and is otherwise
// (its subscription is not up, or a waiter that may have died) only told
// to try.
const HandOffRecent = 25 * time.Millisecond

// FenceRetention is how long a lock's fencing counter outlives the TTL of
// the last lock it fenced. Past it the counter expires, and the next
// holder's token is taken from the server's clock (see the package
// documentation).
const FenceRetention = time.Hour

// Member names a waiter in a line: the TTL it asks for (a release that
// hands it the lock sets that), the Locker it belongs to (where notices
// for it go: Inbox) and the waiter itself (its Lock call's name).
type Member struct {
	TTL    time.Duration
	Locker string
	Waiter string
}

// String encodes m as it is stored in the line:
// "<ttl ms>/<locker>/<waiter>" (parseMember in package line's line.lua reads it).
func (m Member) String() string {
	return strconv.FormatInt(m.TTL.Milliseconds(), 10) + "/" + m.Locker + "/" + m.Waiter
}

// ParseMember reads a member encoded by Member.String.
func ParseMember(s string) (Member, error) {
	ttl, rest, ok := strings.Cut(s, "/")
	locker, waiter, ok2 := strings.Cut(rest, "/")
	ms, err := strconv.ParseInt(ttl, 10, 64)
	if !ok || !ok2 || err != nil || ms < 0 || waiter == "" {
		return Member{}, fmt.Errorf("line member %q is not <ttl ms>/<locker>/<waiter>", s)
	}
	return Member{TTL: time.Duration(ms) * time.Millisecond, Locker: locker, Waiter: waiter}, nil
}

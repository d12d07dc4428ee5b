// Package engine is the machinery every lockzoo technique shares: config
// checking, owner tokens, the TryLock/Lock retry loop, lease bookkeeping
// (deadline, extend, single release) and bounded Redis calls.
//
//	import "github.com/lockzoo/lockzoo/internal/engine"
//
// A technique implements Technique (its Redis commands and nothing else)
// and wraps an engine.Locker built by New. The engine:
//
//  1. checks the key, names the call (a UUIDv4, or Config.Token's value
//     followed by "." and 128 random bits, so that colliding Config.Token
//     values never name two calls alike), draws an owner token for every
//     attempt (the call's name followed by the attempt number) and notes
//     the monotonic time before each attempt;
//  2. asks the technique to acquire, once for TryLock, or in a loop for
//     Lock: this Locker's goroutines waiting for one key queue in FIFO order
//     and only the first contends in Redis; it retries when a release
//     notice names it or anyone (WithNotices: one pub/sub connection per
//     node, package notify), when a local Unlock frees the key, when the
//     holder's remaining TTL reported by the technique (BusyError) runs out,
//     or when Config.Retry's wait ends (capped, for a technique that keeps a
//     line of waiters in Redis, so that the waiter keeps its place:
//     WithLine; replaced by that keep-place bound once the waiter listens,
//     for a technique whose releases always tell or hand off to the head:
//     WithNoticeWaits, and by a longer one when the technique's line saw
//     the waiter's Locker listening: WithListened), whichever comes first; transient
//     Redis failures are retried until ctx ends. Lock also returns without
//     another attempt when the lock is handed off to it: by a release in
//     Redis (a "handoff:" notice, see notice.go; WithInboxNotices sends each
//     notice to the one Locker it concerns; for a QuorumHandOffs technique,
//     whose nodes each hand their copy, once the technique counted enough
//     of them, see quorum.go), or by a local Unlock of a HandOffer
//     technique, which releases and makes the waiter's attempt in one step;
//  3. returns a Lease whose Deadline is the start time plus the validity the
//     technique reported, and which releases at most once;
//  4. names the technique and the call once in every error it returns,
//     "lockzoo: <name>: <op> "<key>": ..." (lockerr.Error, which drops
//     any "lockzoo: " of the errors it wraps): techniques return their
//     errors without that prefix.
//
// Following a hand-off: the waiter's one events channel and the local line
// are in waitq.go, Lock's loop and what a waiter that gives up passes on
// are in lock.go, a hand-off that comes after the waiter left is passed
// on from departed.go, and the Unlock that hands off locally is
// Lease.handOffTo in lease.go (with handedToGone, for a waiter that left
// before the hand-off reached it).
//
// A technique that waits for replicas (WithReplicas, replicas.go) takes
// Config.Replicas; Lock then ends at an attempt the replicas did not
// acknowledge, and a hand-off by a release in Redis is confirmed by the
// waiter's own attempt. Other techniques refuse Config.Replicas.
//
// Config.Observer, when set, hears every call's outcome from observe.go,
// called at a few points of Lock, TryLock, Unlock and Extend; each point
// checks for a nil Observer first, and without one costs nothing more.
//
// Close ends the Locker's notice connections and goroutines at once (see
// Locker.Close); a Locker never closed leaks nothing either, since those
// connections end notify.Linger after the last waiter left.
//
// Shared Redis steps live here too, once: the WATCH/MULTI/EXEC
// owner-checked transaction (Watched), the SET NX EX acquire of the
// articles (SetNXEX) and the pipelined DEL and PUBLISH (DeleteAndPublish,
// and DeleteHeld, the release without an owner check). The transport
// they and the techniques send through (bounded calls, the shared
// Pipeline, scripts) is package redisconn; a Lock attempt's bound is a
// redisconn.Bounded, a context whose deadline the commands read as the
// connections' read deadline.
package engine

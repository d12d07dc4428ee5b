// Package engine is the machinery every lockzoo technique shares: config
// checking, owner tokens, the TryLock/Lock retry loop, lease bookkeeping
// (deadline, extend, single release) and bounded Redis calls.
//
//	import "github.com/lockzoo/lockzoo/internal/engine"
//
// A technique implements Technique (its Redis commands and nothing else)
// and wraps an engine.Locker built by New. Its Locker's methods forward
// to the engine's and exist for their doc comments, which say what that
// technique does; they look alike from package to package on purpose.
// The engine:
//
//  1. checks the key, names the call (a UUIDv4, or Config.Token's value
//     followed by "." and 128 random bits, so that colliding Config.Token
//     values never name two calls alike), draws an owner token for every
//     attempt (the call's name followed by the attempt number) and notes
//     the monotonic time before each attempt;
//  2. asks the technique to acquire, once for TryLock, or in a loop for
//     Lock, whose waiting is package line's: this Locker's goroutines
//     waiting for one key queue in FIFO order and only the first contends
//     in Redis; it retries when a release notice names it or anyone
//     (WithNotices), when a local Unlock frees the key, when the holder's
//     remaining TTL reported by the technique (BusyError) runs out, or
//     when Config.Retry's wait ends (bounded by the line: WithLine,
//     WithListened, WithNoticeWaits), whichever comes first; transient
//     Redis failures are retried until ctx ends. Lock also returns without
//     another attempt when the lock is handed off to it, by a release in
//     Redis or by a local Unlock of a line.HandOffer technique, which releases
//     and makes the waiter's attempt in one step (see package line);
//  3. returns a Lease whose Deadline is the start time plus the validity the
//     technique reported, and which releases at most once;
//  4. names the technique and the call once in every error it returns,
//     "lockzoo: <name>: <op> "<key>": ..." (lockerr.Error, which drops
//     any "lockzoo: " of the errors it wraps): techniques return their
//     errors without that prefix.
//
// The Locker's line (package line) keeps the waiters, routes notices and
// hand-offs to them (a lease's Unlock releases through it, Line.Release)
// and cleans up after a waiter that gives up; a technique plugs into it
// (line.Technique, line.HandOffer, line.Abandoner, line.Quorum), never
// into the engine, which gives no technique a way back to itself.
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
// The Redis steps the article techniques share are package article; the
// transport they and the techniques send through (bounded calls, the
// shared Pipeline, scripts) is package redisconn; a Lock attempt's bound
// is a redisconn.Bounded, a context whose deadline the commands read as
// the connections' read deadline.
package engine

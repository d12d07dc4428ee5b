// Package redlock is lockzoo's multi-node Redis lock: the Redlock algorithm
// of the Redis documentation ("Distributed Locks with Redis",
// https://redis.io/docs/latest/develop/use/patterns/distributed-locks/)
// over N independent Redis masters, with fencing tokens, a line of waiters
// and a guard against nodes that restart without their data.
// docs/redlock.md has the detail: what each request carries, the hand-off
// rules, the fencing proof, owed releases and the restart guard.
//
// # Algorithm
//
// With N pools and Quorum Q (default N/2+1):
//
//  1. Acquire: note the monotonic time, then run acquire.lua on all N nodes
//     at once: SET NX PX and, on success, INCR of the key's fencing
//     counter, in one step. Each node call is bounded by
//     Config.NodeTimeout, the wait for the decision by ctx.
//  2. Decide early: success once Q nodes said yes, failure once Q can no
//     longer be reached. Slow or frozen nodes are not waited for.
//  3. Fence: the token F is the largest counter of the yes-voters. When
//     fewer than Q returned F, a write-back (raise.lua) raises the others
//     while our lock holds there; it must leave Q nodes at F or above.
//  4. Validity = TTL - elapsed - (TTL*DriftFactor + DriftFloor). The lock
//     is held only with a quorum, a settled fence and a positive validity.
//  5. On failure, release every node that said yes or did not answer (a
//     timeout may hide a SET that ran). When refusals alone ruled the
//     quorum out, the error carries the holder's shortest remaining TTL.
//  6. Lock waits in every node's line, ordered by when each call began,
//     and retries on a release notice, no later than the holder's TTL. A
//     release hands a node's copy to a live head with that node's next
//     token; the waiter holds the lock once Q nodes handed it theirs with
//     one token. Unlock to a waiter of the same Locker is one round.
//  7. Unlock runs compare-and-delete on every node and returns once Q
//     deleted the lock, or once every node answered and fewer than Q may
//     still hold it. Extend needs Q nodes that still hold our token. Both
//     return ErrNotHeld when more than N-Q said the lock was not ours.
//
// A node call that failed without a reply makes the node suspect: one
// probe at a time goes there and other calls skip it. A release (or a
// waiter's leave) that could not reach a node is owed to it and paid once
// it answers again. The restart guard reads each node's run_id when a
// connection is new (CLIENT GETNAME travels with the command) and leaves a
// node whose run_id changed out of quorums for the longest TTL plus drift;
// Config.DisableRestartGuard switches it off.
//
// # Weaknesses
//
//   - A Quorum below a majority breaks mutual exclusion.
//   - A node restarted without persistence can let two clients hold the
//     lock when the restart guard is off or the client is new.
//   - Safety relies on bounded clock drift: nodes expire keys by their own
//     clocks, and a clock jump can expire a lock early. ClockSafe is false.
//   - A holder paused past Deadline can still act; only a resource that
//     checks Lease.Fence() refuses it, and the fence relies on the nodes
//     keeping their counters (a counter lost restarts from the node's clock
//     in µs; one that went back, e.g. an old snapshot, can break it).
//   - A pool listed twice votes twice. Nodes must be independent masters.
//   - The line orders waiters by their clients' clocks (fairness only). A
//     dead head holds a node's free lock back for up to LineStale, or
//     LineListened while its connections stay open.
//   - The line's keys and channels must be written by nothing else: forged
//     "handoff:" notices from enough nodes could fake a hand-off.
//   - Every lock name leaves a fencing counter on every node for TTL +
//     protocol.FenceRetention.
//   - A frozen node runs the commands sent to it when it resumes; a SET it
//     runs then stays until its TTL unless the owed release reaches it.
package redlock

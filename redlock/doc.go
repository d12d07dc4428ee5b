// Package redlock is lockzoo's multi-node Redis lock: the Redlock algorithm
// of the Redis documentation ("Distributed Locks with Redis",
// https://redis.io/docs/latest/develop/use/patterns/distributed-locks/), run
// over N independent Redis masters, with a guard against nodes that restart
// without their data.
//
//	import "github.com/lockzoo/lockzoo/redlock"
//
// docs/redlock.md in the repository has the detail behind this overview:
// what each request carries, the hand-off rules, the fencing proof, owed
// releases and the restart guard.
//
// # Algorithm
//
// With N pools (N nodes, no replication between them) and Quorum Q
// (default N/2+1):
//
//  1. Acquire: note the monotonic time, then run the acquire script on all
//     N nodes at once. On each node it is SET <lock> <token> NX PX <ttl ms>
//     and, on success, INCR of the key's fencing counter in the same step,
//     replying with the counter; when the SET fails it replies with the
//     holder's remaining TTL. The keys are lua_release's (docs/wait-protocol.md).
//     Each node call is bounded by Config.NodeTimeout (default TTL/10
//     within 10..250 ms), and the wait for the decision by ctx.
//  2. Decide as soon as possible: success once Q nodes said yes, failure
//     once so many refused or failed that Q can no longer be reached. Slow
//     or frozen nodes are not waited for.
//  3. Fence: the token F is the largest counter the yes-voters returned.
//     When at least Q of them returned exactly F (the usual case) it is
//     settled. Otherwise a second round, the write-back, raises the
//     counters below F on the yes-voters whose lock still holds our token.
//     It must leave Q nodes with a counter of at least F, or the acquire
//     fails.
//  4. Validity = TTL - elapsed - (TTL*DriftFactor + 2 ms), elapsed counted
//     from before the first round to the end of the last. The lock is held
//     only with a quorum, a settled fence and a positive validity.
//     Lease.Deadline() is the start of the attempt plus the validity;
//     Lease.Fence() is F.
//  5. On failure, release on every node that may hold the lock: those that
//     said yes, and those whose answer is unknown (a timeout may hide a SET
//     that ran). Nodes that said no hold someone else's lock and are left
//     alone. When refusals alone ruled the quorum out, the error carries
//     the shortest remaining TTL the refusing nodes reported. An attempt
//     takes over the key of an earlier attempt of the same Lock call, never
//     a later one's, so a late request cannot take a won lease's vote away.
//  6. Lock retries at once when a release notice arrives, and no later than
//     the holder's remaining TTL or the keep-place timer. Until its notice
//     subscriptions (one per node) are confirmed, a waiter also retries on
//     Config.Retry (DefaultRetry: 4 ms growing to 64 ms); after, it sleeps
//     until a notice. Config.Retry still counts the attempts and says when
//     to give up.
//  7. Unlock runs the compare-and-delete script on every node and returns
//     once Q nodes deleted the lock. When nodes fail it still returns nil
//     if at least one node deleted it and fewer than Q nodes may still hold
//     the token. Extend runs compare-and-PEXPIRE on every node, needs Q
//     nodes that still hold our token and recomputes the validity from the
//     start of the call. Either returns ErrNotHeld when more than N-Q nodes
//     said the lock was not ours. The fence does not change.
//
// # Waiting in line and hand-offs
//
// Every node keeps a line of the Lock calls it refused, ordered by when
// each call began on its client's clock, so all nodes agree on the head
// instead of splitting their votes. While anyone waits, a node gives a free
// lock only to the head. A release hands the node's copy of the lock to a
// live head, with that node's next fencing token, and notifies its Locker;
// the waiter holds the lock once Q nodes handed it theirs with one token,
// without an acquire round. A hand-off counts only when it came after that
// node refused the waiter's latest attempt, which is where the validity is
// counted from. When a goroutine of the same Locker waits, Unlock instead
// hands the lock over in one round: each node's acquire script deletes the
// old holder's key and then decides the waiter's attempt, in one atomic
// step. docs/wait-protocol.md describes the line.
//
// # Fencing tokens
//
// Fencing needs tokens that increase, not consecutive ones, so it needs no
// consensus: a node's counter only grows (INCR atomic with SET NX, or a
// raise while our lock holds there), a token is the largest counter of a
// quorum and is written back to a quorum while the lock is held, and any
// later holder's quorum shares a node with it (2Q > N). So a holder whose
// acquire began after an earlier one returned gets a larger token, with no
// assumption about clocks or pauses, as long as the nodes keep their
// counters. A counter lost to a restart, a flush, eviction or its retention
// restarts from the node's clock in µs, which stays above earlier tokens
// while no clock steps back and the nodes' clocks roughly agree. A counter
// that went back (an old snapshot, a failover to a lagging replica) can
// break it. docs/redlock.md has the proof and its limits.
//
// # Node timeouts and owed releases
//
// The nodes are contacted at once and the decision does not wait for slow
// ones, so NodeTimeout only bounds a frozen node's call; it defaults to
// longer than the Redis documentation's few tens of ms because a
// CPU-starved client turns shorter bounds into false failures. A node whose
// call failed without a reply is suspect: it gets one probe at a time and
// other requests skip it, so a frozen node costs one goroutine and one
// connection. An undo, a spent lease's release or a gave-up waiter's leave
// that could not reach a node is owed to it and sent once the node answers again (at most five
// tries, dropped when the node stays silent or the TTL passed). A failed
// Unlock owes nothing: the lease is not spent.
//
// # Restart guard
//
// A node restarted without persistence forgets its locks. A Locker
// remembers each node's run_id, read when a connection is new (CLIENT
// GETNAME travels with the lock command, so the hot path stays one round
// trip per node), and leaves a node whose run_id changed out of quorums
// for its longest TTL plus the drift allowance. It covers only Lockers that
// saw the node before its restart, and needs CLIENT GETNAME, CLIENT
// SETNAME and INFO; Config.DisableRestartGuard switches it off.
// Persistence with appendfsync always, or restarting a node only after the
// longest TTL, protects every client.
//
// # Weaknesses
//
//   - A Quorum below a majority breaks mutual exclusion. Config{Quorum: 1}
//     reproduces article 003's rule (seeds/003_82f4352895d780c9.txt: any
//     one node's grant wins): while A's node is cut off from B, B takes the
//     lock on the others and both hold it.
//   - A node restarted without persistence can let two clients hold the
//     lock when the restart guard is off or the client is new.
//   - Safety relies on bounded clock drift: Redis expires keys by its own
//     clock, and the validity assumes the clients' and the nodes' clocks
//     advance at nearly the same rate (DriftFactor). A jump of a node's
//     clock can expire a lock early. ClockSafe is false.
//   - A holder paused past Deadline (GC, swap) can still act on the
//     resource; only a resource that checks Lease.Fence() refuses it, and
//     the fence relies on the nodes keeping their counters.
//   - A pool listed twice votes twice. Nodes must be independent masters.
//   - The line orders waiters by their clients' clocks: a client whose
//     clock runs behind is served first. Fairness only, never exclusion.
//   - A dead waiter at the head of a node's line holds that node's free
//     lock back for up to LineStale, or LineListened when its process froze
//     with its connections open. One that died within HandOffRecent of a
//     release, or while its Locker still listened, can be handed the
//     node's copy, which stays until its TTL as a dead holder's lock does.
//   - The line and notices use keys and channels nothing else may write
//     to: a forged "handoff:" notice, from enough nodes and with a token
//     above the counter, would make a waiter believe it holds the lock.
//   - Every lock name leaves a small fencing counter on every node for
//     TTL + protocol.FenceRetention (one hour) after it was made.
//   - A frozen node still runs the commands sent to it when it resumes; a
//     SET it runs then stays until its TTL, unless the release owed to it
//     reaches it later.
//   - A round passes through several goroutines (the caller, each node's
//     reader), so in a process whose CPU-bound goroutines keep every
//     processor busy, waiting for a processor dominates a round;
//     BenchmarkLockUnlockBusyCPU measures it.
package redlock

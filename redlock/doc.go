// Package redlock is lockzoo's multi-node Redis lock: the Redlock algorithm
// of the Redis documentation ("Distributed Locks with Redis",
// https://redis.io/docs/latest/develop/use/patterns/distributed-locks/), run
// over N independent Redis masters, with a guard against nodes that restart
// without their data.
//
//	import "github.com/lockzoo/lockzoo/redlock"
//
// # Algorithm
//
// With N pools (N nodes, no replication between them) and Quorum Q
// (default N/2+1):
//
//  1. Acquire: note the monotonic time, then send SET <prefix><key> <token>
//     NX PX <ttl ms> to all N nodes at once, one goroutine per node. Each
//     call (connection, write, read) is bounded by Config.NodeTimeout
//     (default TTL/10 within 10..250 ms), and the wait for the decision by
//     ctx.
//  2. Decide as soon as possible: success once Q nodes said OK, failure once
//     so many refused or failed that Q can no longer be reached. Slow or
//     frozen nodes are not waited for.
//  3. Validity = TTL - elapsed - (TTL*DriftFactor + 2 ms). The lock is held
//     only with a quorum and a positive validity; Lease.Deadline() is the
//     start of the attempt plus the validity.
//  4. On failure, release (compare-and-delete script) on every node that may
//     hold the lock: those that said OK, and those whose answer is unknown
//     (a timeout may hide a SET that ran). The attempt returns once the
//     nodes that said OK before the decision are released, so that a retry
//     does not run into its own leftovers. Nodes that answer after the
//     decision are handled by their goroutine, which finishes its call
//     within NodeTimeout and releases if its SET succeeded. Nodes that said
//     no hold someone else's lock and are left alone.
//  5. Lock retries after a random delay (Config.Retry, jittered by default)
//     until it succeeds or ctx ends, so that clients that split the votes
//     do not collide again.
//  6. Unlock runs the compare-and-delete script on every node and returns
//     once Q nodes deleted it. When nodes fail it still returns nil if at
//     least one node deleted it and fewer than Q nodes may still hold the
//     token (the others said "not ours"): the lock is released. Extend runs
//     compare-and-PEXPIRE on every node, needs Q nodes that still hold our
//     token and recomputes the validity from the start of the call. Either
//     returns ErrNotHeld when more than N-Q nodes said the lock was not
//     ours.
//
// Answers that arrive after a decision are finished in the background;
// Locker.Wait waits for them.
//
// # Node timeouts
//
// The Redis documentation asks for a per-node timeout of a few tens of
// milliseconds because its clients contact the nodes one after the other,
// so every slow node eats into the validity. Here the nodes are contacted at
// once and the decision does not wait for the slow ones, so the timeout
// only bounds a frozen node's background call and the attempts that cannot
// decide without it. The default is therefore a little longer (up to
// 250 ms): a CPU-starved client or a GC pause longer than the timeout turns
// healthy nodes' answers into failures, and a 50 ms bound did so on loaded
// test machines.
//
// A node whose call failed without a reply (timeout, refused connection)
// is suspect: it gets one call at a time (a probe) and the other requests
// skip it at once, as if it had failed, until it replies again. A frozen
// node therefore costs one goroutine and one connection, not one per
// request. Skipping is safe: nothing is sent, and a missing vote never
// counts towards a quorum.
//
// # Article 003
//
// seeds/003_82f4352895d780c9.txt presents Redlock as the fix for SETNX
// locks, but its sample acquire loops over the clients one after the other
// and returns True as soon as one SET NX succeeds: the first node that
// grants the lock wins, with no majority, no validity, no release of the
// nodes it did lock on failure, and a release that deletes the key whatever
// its value. Config{Quorum: 1} reproduces its voting rule (the rest of this
// package stays correct): while client A's node is cut off from client B,
// B takes the lock on the other nodes and both hold it. Any Quorum of N/2
// or less is unsafe the same way.
//
// # Restart guard
//
// The Redis documentation notes that a node restarted without persistence
// forgets its locks: a client held nodes 1-3 of 5, node 3 restarts empty,
// and another client takes 3, 4 and 5. Its remedy is to keep a restarted
// node out for one TTL. The guard does this on the client side: a Locker
// remembers each node's run_id (INFO server), and a node whose run_id
// changed is left out of quorums (its yes counts as a refusal) for the
// longest TTL the Locker has used plus the drift allowance, from the moment
// it is seen again.
//
// The run_id is read when a connection is new, not on every call: CLIENT
// GETNAME travels in the same pipeline as the lock command, so the hot path
// stays one round trip per node. A connection without lockzoo's name
// ("lockzoo-redlock") costs one extra round trip (INFO server and CLIENT
// SETNAME). Every connection made after a restart is new, so a Locker that
// saw the node before cannot miss its restart. The guard is on by default;
// Config.DisableRestartGuard switches it off.
//
// What the guard does not cover: it protects the Lockers that saw the node
// before its restart. A Locker created afterwards (a new process, say) has
// nothing to compare with and counts the node at once. It waits for this
// Locker's longest TTL, not for the TTLs other clients use. It needs CLIENT
// GETNAME, CLIENT SETNAME and INFO (switch it off where ACLs forbid them),
// and it replaces a connection name the pool's dialer may have set.
// Persistence with appendfsync always, or delaying a node's restart by the
// longest TTL, protects every client.
//
// # Weaknesses
//
//   - A Quorum below a majority breaks mutual exclusion (article 003).
//   - A node restarted without persistence can let two clients hold the
//     lock when the restart guard is off or the client is new (see above).
//   - Safety relies on bounded clock drift: Redis expires keys by its own
//     wall clock, and the validity assumes the client's and the nodes' clocks
//     advance at nearly the same rate (DriftFactor). A jump of a node's clock
//     can expire a lock early. ClockSafe is false.
//   - No fencing tokens (Fence is 0): a holder paused past Deadline (GC,
//     swap) can still act on the resource. The lock is only safe up to
//     Deadline.
//   - A pool listed twice votes twice. Nodes must be independent masters.
//   - A frozen node still runs the commands sent to it when it resumes, after
//     the client gave up; a SET it runs then stays until its TTL, unless the
//     release sent after the failure reaches it later (a suspect node gets
//     no such release while its probe is in flight).
package redlock

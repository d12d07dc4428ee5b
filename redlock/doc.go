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
//  1. Acquire: note the monotonic time, then run the acquire script on all N
//     nodes at once, one goroutine per node: SET <lock> <token> NX PX <ttl
//     ms> and, when it succeeds, INCR of the key's fencing counter
//     (FenceKey) in the same step, replying with the counter; the keys are
//     lua_release's (<lock> is <prefix>{<key>}, see its package
//     documentation, and all of a lock's keys share its Redis Cluster slot
//     and its prefix); when the SET fails it replies with
//     the holder's remaining TTL (PTTL) instead. Each call (connection,
//     write, read) is bounded by Config.NodeTimeout (default TTL/10 within
//     10..250 ms), and the wait for the decision by ctx.
//  2. Decide as soon as possible: success once Q nodes said yes, failure
//     once so many refused or failed that Q can no longer be reached. Slow
//     or frozen nodes are not waited for.
//  3. Fence: the token F is the largest counter the yes-voters returned.
//     When at least Q of them returned exactly F (the usual case: the
//     nodes' counters move in step) it is settled. Otherwise a second
//     parallel round, the write-back, runs the raise script on the
//     yes-voters whose counter is below F: while the lock there still holds
//     our token it sets the counter to max(counter, F). It must leave Q
//     nodes with a counter of at least F, or the acquire fails. See
//     "Fencing tokens".
//  4. Validity = TTL - elapsed - (TTL*DriftFactor + 2 ms), elapsed counted
//     from before the first round to the end of the last. The lock is held
//     only with a quorum, a settled fence and a positive validity;
//     Lease.Deadline() is the start of the attempt plus the validity, and
//     Lease.Fence() is F.
//  5. On failure, release (compare-and-delete script) on every node that may
//     hold the lock: those that said yes, and those whose answer is unknown
//     (a timeout may hide a SET that ran). The attempt returns once the
//     nodes that said yes before the decision are released, so that a retry
//     does not run into its own leftovers. Nodes that answer after the
//     decision are handled by their goroutine, which finishes its call
//     within NodeTimeout and releases if its SET succeeded. Nodes that said
//     no hold someone else's lock and are left alone. When refusals alone
//     ruled the quorum out (the key is held, as opposed to nodes failing),
//     the error is an *engine.BusyError carrying the shortest remaining TTL
//     the refusing nodes reported (a node that still holds a key of this
//     Lock call it does not take over reports at most NodeTimeout, the
//     time its release takes). An attempt takes over, on each node, the
//     key of an earlier attempt of the same Lock call (one whose reply was
//     lost and whose release has not come), but never a later attempt's: a
//     failed attempt's request that reaches a node late, after a later
//     attempt won, must not take that lease's vote away.
//  6. Lock retries at once when a release notice arrives, and no later
//     than the BusyError's remaining TTL or LineStale/2 (LineListened/2
//     when every node that answered saw its Locker listening). Waiters listen
//     for notices on every node (engine.WithInboxNotices over all the
//     pools: one subscription connection per node per Locker while any of
//     its Lock calls waits, on the Locker's own inbox channel for the key).
//     Until a waiter's subscription is confirmed it also retries after a
//     random delay (Config.Retry; by default DefaultRetry, jittered waits
//     from 4 ms growing to 64 ms); once it listens it sleeps until a notice
//     (engine.WithNoticeWaits), and the keep-place timer only keeps its
//     place in the lines and catches a lost notice. Every release, an
//     undo's included, serves the head of each node's line (a hand-off, or
//     a notice to try), so clients that split the votes are woken in the
//     lines' order, the head first. A waiter that a quorum of nodes handed
//     the lock holds it without another round (see "Hand-offs between
//     Lockers"). Config.Retry still counts the attempts and says when to
//     give up.
//  7. Unlock runs the compare-and-delete script on every node, which, in
//     the same step as the delete, hands the node's copy of the lock to
//     the head of its line when that waiter is alive, or else tells it to
//     try, and returns once Q nodes deleted the lock (an
//     acquire of the same key by the same Locker that reaches a node
//     before the release still on its way there deletes the released lock
//     first, rather than being refused by it and leaving that node's
//     fencing counter behind). When
//     nodes fail it still returns nil if at least one node deleted it and
//     fewer than Q nodes may still hold the token (the others said "not
//     ours"): the lock is released. When a goroutine of the same Locker
//     waits for the key, Unlock instead passes the lock on in one round
//     (see "Waiting in line"). Extend runs compare-and-PEXPIRE on every
//     node, needs Q nodes that still hold our token and recomputes the
//     validity from the start of the call. Either returns ErrNotHeld when
//     more than N-Q nodes said the lock was not ours. The fence does not
//     change.
//
// # What each request carries
//
// Every node call is one EVALSHA (EVAL when the node lacks the script),
// pipelined with the restart guard's CLIENT GETNAME. The acquire script
// takes the lock's four keys (the lock, its fencing counter, its line and
// the waiters' last-seen times) and six arguments: the token, the TTL in
// ms, the Lock call's name, whether it waits in line, its ticket and its
// Locker's name; a seventh, the token of a lock to delete first, goes only
// with a hand-off or when a release of ours is still on its way to the
// node. The protocol's constants (LineStale, LineListened,
// protocol.FenceRetention) are
// set in the scripts' text, and the waiter's line member and the lock's
// notice channel are built in Lua from the arguments and the key, off the
// uncontended path. A won acquire that released nothing first replies its
// counter alone. The release script takes the same four keys, kept boxed
// from the acquire in the lease, and the token (an undo adds the waiter's
// ticket and line member, to put it back in line; an owed release paid
// late adds "-", for a release that hands nothing on). A refusal to a
// waiter carries the node's fencing counter, for the hand-offs (see
// "Hand-offs between Lockers"). Each round's request is built once and
// sent to every node.
//
// The calls of a Locker's concurrent rounds to one node share one
// connection (engine.Pipeline): a call made while another to that node is
// under way queues its GETNAME and script there, and they go out in one
// write with those the other calls queued meanwhile; one reader per node
// hands out the replies in order. Redis and the client then each read and
// write many calls per system call instead of one, which on a machine
// short of CPU is most of what a round costs them (the README's
// compare-peers report has the figures). A call with nothing else under
// way to its node goes alone on a connection of its own, as before. A
// shared connection that fails fails every call written on it, each a node
// failure of its round as a failed connection of its own would be; a call
// queued behind the failure, never written, is sent again alone. The writer
// yields the processor once before it writes, so that the rounds ready to
// run queue their calls for the same write (engine.NewDeadlinePipeline).
//
// # Waiting in line
//
// Every node keeps a line of the Lock calls its acquire script refused (a
// sorted set, <lock>:line) ordered by the call's ticket:
// the time the Lock call began on its client's clock, in µs, the same in
// every attempt and on every node, so all nodes order the waiters alike.
// While anyone waits, a node gives a free lock only to the waiter with the
// earliest ticket (or to an attempt whose ticket is earlier still), so the
// nodes' votes agree instead of splitting between waiters, and a client
// that releases and locks again queues behind the others. A waiter unseen
// for LineStale is dropped, unless its Locker listens on the node (PUBSUB
// NUMSUB counts its subscription there): that one is dropped when unseen
// for LineListened. A refusal tells the waiter whether the node saw its
// Locker listening; a live one attempts at least every LineStale/2, or
// every LineListened/2 when every node that answered saw it listening,
// to keep its place. A winner leaves the lines of the nodes that did not
// vote for it, and a Lock that gives up leaves every line (Abandon),
// whether its last attempt was refused or failed for want of answers. A
// node the leave does not reach is owed it (see below), and an undo of the
// gave-up waiter's attempt that reaches a node after its leave puts it
// back in no line: a waiter that gave up never holds a free lock's place
// once the node answers again (TestGaveUpWaiterLeavesEveryLine). A
// release notifies only the Locker of the head of the node's line.
//
// Unlock with a waiter of the same Locker in line hands the lock over in
// one round instead of two: the waiter's attempt goes out with the
// releasing token, and each node's acquire script deletes the old holder's
// key (only if it still holds that token) before it decides the attempt,
// in the same atomic step. The attempt is an ordinary one (a quorum, the
// fence, the validity counted from before the round), so the fencing
// argument below applies unchanged; a node that deleted the old key but
// gave the lock to an earlier waiter of another client announces the
// release to that waiter's Locker. Unlock's result counts the nodes that
// deleted the old key.
//
// # Hand-offs between Lockers
//
// A release on a node whose line has a live head (one that attempted
// within protocol.HandOffRecent, or whose Locker listens there) does what
// lua_release's release does on its one node (protocol's handoff.lua):
// it sets the node's copy of the lock to the waiter's name with the
// waiter's TTL and the node's next fencing token, takes the waiter out of
// the line and publishes "handoff:<token>:<waiter>" to its Locker. The
// waiter holds the lock once Q nodes handed it theirs with one token,
// without an acquire round: a hand-off is then the release's one-way trip
// and the notices, where it was the release, a notice and a whole
// acquire round (the README's compare-peers report has the figures).
//
// A node's hand-off counts only for the waiter's latest attempt, and only
// when that node refused it (queued the waiter) reporting a fencing
// counter smaller than the hand-off's token: counters never decrease,
// so the hand-off came after that refusal, and the copy's TTL started
// after the attempt was sent, which is where the validity is counted from,
// as for a round. A node counts only once every other request the Lock
// call sent it has been answered, none of them after the attempt began
// with a vote that may hold the lock: an acquire takes a copy handed to
// its own Lock call (it holds the call's name) under its own token, so a
// late request of an earlier attempt, or a local hand-off's attempt for
// the same waiter, could take the copy and its undo delete it. The
// fencing argument below holds unchanged: each counted copy's token came
// from an INCR in the same atomic step as the SET of that copy. When the
// counted tokens differ, when too few nodes hand the lock within
// NodeTimeout of the first (another waiter heads some lines), or when the
// validity would be gone, the waiter attempts instead, and its round
// takes the copies handed to it and settles the fence as usual.
//
// A copy handed to a waiter of this Locker that no longer waits (it gave
// up, or took the lock otherwise) is passed on, node by node, as its
// notice arrives or as the Lock call ends; the nodes that did not hand a
// waiter their copy when a quorum did are left by it once its lease is
// released, or NodeTimeout after. Releases that are owed to a node and
// paid late delete the lock and tell the head rather than hand it on: by
// then the head may be a waiter that is gone.
//
// Answers that arrive after a decision are finished in the background;
// Locker.Wait waits for them. A won lock whose release goes out before a
// slow node answered is taken back on that node when its yes arrives: the
// release may have reached the node before the SET, and would otherwise
// leave a lock nobody owns there until its TTL.
//
// # Fencing tokens
//
// Martin Kleppmann's critique of Redlock ("How to do distributed locking",
// 2016) points out that a lock with expiry protects nothing by itself: a
// holder paused past its lease (GC, swap, a slow network) still writes
// afterwards, and only a fencing token that the resource checks, one that
// increases from holder to holder, refuses the stale write. Redlock's
// random token does not increase; a counter on one node fails with that
// node; counters on several nodes drift apart; so he expects that
// generating fencing tokens would need a consensus algorithm. It does not,
// because fencing needs tokens that increase, not tokens that are
// consecutive: a token is the largest counter of a quorum, it is written
// back to a quorum while the lock is held there, and any later holder must
// pass through one of those nodes.
//
// Let 2Q > N (the default majority quorum). Each node n keeps a counter
// c(n) per lock key. Only two things change it: the acquire script's INCR,
// in the same atomic step as a successful SET NX, and the raise script,
// which sets it to max(c(n), F) only while the lock on n holds the
// acquirer's token. So c(n) never decreases, as long as n keeps its data.
//
// A successful acquire A has yes-voters Y_A (at least Q nodes whose SET NX
// succeeded) and token F_A = the largest counter they returned. It returns
// only once a set C_A of at least Q of its yes-voters have c(n) >= F_A:
// those whose INCR returned F_A, plus those the write-back raised. On every
// node of C_A, A's write that left c(n) >= F_A happened while A's key was
// on n (the INCR is atomic with the SET; the raise checks the key).
//
// Claim: for two successful acquires A and B of one key, if on some node
// n in C_A that is among B's yes-voters A's key came and went before B's
// SET NX on n, then F_B > F_A. Proof: B's SET NX on n succeeded after A's
// key on n was gone, so after A's write on n; B's INCR, in the same step,
// returned more than c(n) at that time, which is at least F_A; and F_B is
// at least what B's INCR on n returned.
//
// When does such a node exist? C_A and Y_B both have at least Q of the N
// nodes, so they share a node n. If A's acquire returned before B's
// (successful) attempt began, A's SET on n came before B's, hence A's key
// was gone when B's SET NX succeeded: F_B > F_A. That is Kleppmann's case
// (A pauses holding its lease; its keys expire; B takes the lock and
// writes with F_B; A wakes and writes with F_A < F_B, and the resource
// refuses it), and every hand-off where the next holder's winning attempt
// started after the previous holder got its lease. It needs no assumption
// about clocks, pauses or message delays, only that the nodes keep their
// counters. Even when two acquires overlap in time, a node n in C_A ∩ C_B
// (two quorums meet) held their keys one after the other, so the claim
// applies one way or the other: two successful acquires never get the
// same token, and holders that clock trouble let overlap are still
// ordered, as their keys were on every node of C_A ∩ C_B.
//
// Where it stops holding:
//
//   - A shared node loses its counter between A's write and B's INCR: a
//     restart without persistence (or with appendfsync everysec: the last
//     second), FLUSHALL or FLUSHDB, a DEL of the fencing counters, its
//     retention (it expires TTL + protocol.FenceRetention after it was
//     made), or eviction under maxmemory. The node then makes a new
//     counter from its clock in µs (TIME), which is above F_A provided that
//     (1) no node's clock steps backwards, (2) a key is locked less than
//     once per µs on average, and (3) the nodes' clocks differ by less than
//     the time between A's acquire and B's: F_A came from at most some
//     node's clock at A's acquire plus the holders since. So the tokens
//     still increase. They can go back only when, beyond that, the node
//     keeps a counter that went back: a restore from an older snapshot, or
//     a failover to a replica that missed writes (replication is
//     asynchronous). B's INCR on n may then return F_A or less and, when no
//     other yes-voter of B carries a counter that high, F_B <= F_A: the
//     resource accepts A's stale write, or refuses B's. The restart guard narrows
//     this for the Lockers that saw the restart: while they leave the
//     restarted node out, its counter is not used, and C_A without it
//     still meets every quorum of the other nodes (2Q > N). It does not
//     close it: after one TTL the node counts again with its counter reset
//     (a paused A can write much later than one TTL), and a Locker that did
//     not see the restart counts it at once. Persistence with appendfsync
//     always, and no flushes, failovers or evictions, closes it.
//   - A Quorum of N/2 or less: two quorums need not share a node, so
//     tokens need not increase (mutual exclusion fails the same way). A
//     pool listed twice counts one node twice, with the same effect.
//   - Tokens are not consecutive: an attempt that fails still increments
//     the counters of the nodes it locked, so tokens jump (a waiter that
//     polls a node whose copy of the lock expired early increments it
//     each time). A resource must compare tokens, never expect +1.
//   - A token orders holders; it protects only a resource that checks it
//     and remembers the highest token it accepted (package fencing).
//   - The counters are shared with lua_release, which uses the same
//     FenceKey naming: harmless, as both only increase them.
//
// The write-back round costs one more round trip only when the yes-voters'
// counters disagree: after a node missed increments (it was down, frozen,
// skipped as suspect, or held another owner's copy of the lock while the
// others were free, or its counter was changed by hand), and on the first
// acquire of a key, or the first after its counters expired, since each
// node makes a new counter from its own clock. It brings the lagging
// yes-voters up to date, so the counters move in step again.
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
// A release that a node may still need is owed to it rather than
// dropped: the undo of a failed attempt, a spent lease's release, or a
// gave-up waiter's leave, that the breaker skipped or whose reply was lost (a killed connection, after
// which the pool lends the dead connections beside it). One goroutine per
// node sends the releases it is owed as soon as the breaker lets a call
// through, in the order they were owed, each at most five times, and
// drops them once the node has taken none for twice NodeTimeout (a frozen node) or their TTL passed.
// Without it, a connection kill left locks on the node until their TTL,
// and with one more node failing each kept every quorum for its key from
// forming (TestSharedNodeConnectionKilled). A failed Unlock owes nothing:
// its lease is not spent, and the caller releases it again.
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
// GETNAME travels right before the lock command on the same connection
// (engine.Pipeline.DoTwo), so the hot path stays one round trip per node. A connection without lockzoo's name
// ("lockzoo-redlock") costs one extra round trip (INFO server and CLIENT
// SETNAME); the lock command has run by then, so a check that fails
// counts as that command's lost reply: a failed round takes its SET back
// there, and a won one takes the waiter out of that node's line. Every
// connection made after a restart is new, so a Locker that
// saw the node before cannot miss its restart. The guard is on by default;
// Config.DisableRestartGuard switches it off. The release notices'
// subscription connections come from the same pools but never carry lock
// commands: a subscribed connection stays with the notice listener until
// it closes it, and redigo's pool unsubscribes a connection before taking
// it back, so the guard never sees a subscribed one.
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
//   - A holder paused past Deadline (GC, swap) can still act on the
//     resource; only a resource that checks Lease.Fence() refuses it, and
//     the fence relies on the nodes keeping their counters (see "Fencing
//     tokens").
//   - A pool listed twice votes twice. Nodes must be independent masters.
//   - The line orders waiters by their clients' clocks: a client whose
//     clock runs behind is served before waiters that came earlier. This
//     affects fairness only, never mutual exclusion.
//   - A waiter at the head of a node's line whose process died keeps that
//     node's free lock from the others for up to LineStale, and for up to
//     LineListened when the process froze (SIGSTOP, a VM paused) or its
//     host vanished with its connections still open, since the node still
//     counts its subscription. A release handed such a waiter the node's
//     copy when it died within protocol.HandOffRecent of the release, or
//     while its Locker still listened: that copy stays until its TTL, as a
//     dead holder's lock does.
//   - The line and notices use keys and channels nothing else may write
//     to: a forged "handoff:" notice, from enough nodes and with a token
//     above the counter, would make a waiter believe it holds the lock.
//   - Every lock name used leaves a small fencing counter on every node
//     for TTL + protocol.FenceRetention (one hour) after it was made, as
//     with lua_release.
//   - A frozen node still runs the commands sent to it when it resumes, after
//     the client gave up; a SET it runs then stays until its TTL, unless the
//     release owed to it after the failure reaches it later (it is dropped
//     once the node has taken nothing for twice NodeTimeout).
//   - A round passes from goroutine to goroutine (the caller, each node's
//     Pipeline reader, the caller again), and each of them may wait for a
//     processor. In a process whose CPU-bound goroutines keep every
//     processor busy, that wait is most of the round: beside two
//     never-blocking goroutines per processor, BenchmarkLockUnlockBusyCPU
//     measured a pair's p50 at 105 ms on a 2-core machine, against 3.5 ms
//     without them in the same run (redsync on five nodes, measured so
//     apart: 82 ms; lua_release: 0.2 ms). The writers' yield adds to it
//     (80-87 ms without it, 108-122 ms with it, in alternating runs) and
//     is kept, since an idle process makes 1.6x the pairs with it.
package redlock

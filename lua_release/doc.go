// Package luarelease is lockzoo's reference single-node Redis lock: an
// atomic SET NX PX to acquire, and one Lua script that compares the owner
// token and deletes (or extends) in a single step.
//
//	import luarelease "github.com/lockzoo/lockzoo/lua_release"
//
// It reproduces the third version in article 000 (seeds/000_ed7161a2a0b1d845.txt),
// the one that replaces the WATCH/MULTI/EXEC release with a Lua script, with
// millisecond rather than whole-second TTLs.
//
// # Keys
//
// A lock named key under Config.Prefix p lives at p{key} (or at p + key
// when that carries a Redis Cluster hash tag of its own, as "orders:{42}"
// does). Its other keys share its slot and its prefix: <lock>:fence (the
// fencing counter), <lock>:line and <lock>:seen (the line of waiters), and
// the channels <lock>:notice:<locker>. An ACL user with ~<p>* &<p>* may do
// all the package does. docs/wait-protocol.md lists their retentions.
//
// # Algorithm
//
//  1. Acquire: one script. When nobody waits in the key's line, it is
//     SET <lock> <token> NX PX <ttl ms>; on success the script also
//     INCRs the key's fencing counter (FenceKey) and returns it:
//     Lease.Fence(). The value and the expiry are written in one command,
//     so a client that dies right after acquiring still leaves a lock that
//     expires. This uncontended acquire is the script's first lines: EXISTS
//     of the line, the SET and the INCR, and nothing else runs.
//  2. Waiting, fairly: when the lock is held, a caller in Lock joins the
//     key's line in Redis (a sorted set by arrival time; the member names
//     the waiter, its TTL and its Locker) and the script returns the
//     holder's PTTL (ErrNotAcquired). While anyone waits, a free lock goes
//     only to the waiter at the head of the line, so a client that releases
//     and at once locks again queues behind the others. A waiter keeps its
//     place by attempting again: it is dropped when unseen for LineStale,
//     or for LineListened when its Locker listens for notices on the key's
//     node (PUBSUB NUMSUB counts its subscription there). A waiter that
//     gives up leaves the line (Abandon, tried again until it reaches
//     Redis). TryLock never joins the line and fails while others wait.
//     docs/wait-protocol.md describes the line in full.
//  3. Lock repeats step 1 until it succeeds, the lock is handed to it
//     (step 4), or ctx ends. This Locker's goroutines waiting for one key
//     queue locally in FIFO order and only the first contends in Redis. It
//     retries when a release notice names it (on the Locker's own inbox
//     channel for the key), when a local Unlock frees the key, when the
//     holder's reported TTL runs out, or when Config.Retry's wait ends,
//     whichever comes first. Once its subscription is confirmed, a waiter
//     no longer polls on Retry's waits: it sleeps until a hand-off or a
//     notice reaches it, the holder's TTL runs out, or LineListened/2
//     passes (LineStale/2 when the line did not see its Locker
//     listening), which keeps its place and catches a lost notice.
//     Config.Retry still counts the attempts and says when to give up.
//  4. Release: one script. If GET key == token, the lock goes on at once:
//     when nobody waits (EXISTS of the line), the script deletes the key,
//     and that is the whole uncontended release; when the head of the line
//     is alive (it made an attempt within HandOffRecent, or, seen within
//     LineListened, its Locker listens on its inbox: PUBSUB NUMSUB counts a
//     subscriber), the script sets the key to that waiter's name with the
//     waiter's TTL, INCRs the fencing counter, takes the waiter out of the
//     line and publishes "handoff:<fence>:<waiter>" to the waiter's Locker,
//     whose Lock returns without another round trip (its validity counted
//     from the send time of its earliest attempt that may have put it in the
//     line, refused or with its reply lost: the hand-off came after that,
//     and never from before its Lock call began). Otherwise the script
//     deletes the key and publishes "head:<waiter>", and that waiter tries
//     at once. Redis runs a script atomically, so no other client can take
//     the lock between the compare and the delete or hand-off; a lock that
//     expired and was taken by someone else is left alone and Unlock returns
//     ErrNotHeld. A notice that is lost costs only time: the waiter's next
//     attempt finds the lock set to its name and takes it. When a goroutine
//     of the releasing Locker waits for the key, Unlock runs the same
//     release with that waiter's line member in it: when the waiter is the
//     head of the line, the lock is handed to it as above but without the
//     notice, and Unlock hands it over from the reply; otherwise the release
//     serves the line as above and the waiter tries on its own.
//  5. Extend: one script, if GET key == token then PEXPIRE key ttl.
//
// Each operation is one round trip, and a hand-off under contention is one
// round trip plus the notice's delivery (to a goroutine of the releasing
// Locker: the round trip alone). Scripts run with EVALSHA, falling back
// to EVAL once when the server has not cached them (NOSCRIPT).
//
// The acquire and release scripts of a Locker's concurrent calls share
// one connection (the Pipeline, package internal/redisconn; its writer
// does not yield the processor, as redlock's does): a call made while
// others are under way writes its script there with theirs, and one
// reader hands out the replies, so Redis and the client read many scripts
// per system call. A call with nothing else under way, or one that finds
// MaxInFlight (64) scripts awaiting replies, goes alone on a connection of
// its own, as do Extend, the notices' subscriptions and the clean-ups.
// A shared connection that fails fails every script awaiting a reply on
// it: its attempts are taken back and its Unlocks leave their leases
// unspent. docs/faults.md says what it guarantees about replies.
//
// Fencing tokens strictly increase across successive holders of a key:
// each successful acquire increments the counter in the same atomic step
// that sets the lock, and a counter that is missing (new, expired
// FenceRetention after the TTL of the lock that made it, evicted, or lost
// with a restart or FLUSHALL) starts again from the server's clock in µs
// (TIME), above every token issued before. This assumes that the Redis
// server's clock never steps backwards and that a key is locked less than
// once per µs on average (see package internal/protocol); nothing else
// about clocks. A counter that is not an integer in [0, 2^53) fails the
// acquire with an error naming it, and nothing is written. Pass Fence() to
// the resource you protect (see package fencing) so that a holder paused
// past its TTL cannot overwrite a newer holder's work. Nothing the package
// writes lives forever: the lock expires with its TTL, the line 4 ×
// LineListened after its last waiter's attempt, the counter TTL +
// FenceRetention after it was made.
//
// # Replicas
//
// With Config.Replicas n, every acquire, extend and hand-off that took the
// lock is followed, on the connection that wrote it (one of the call's
// own, not the Pipeline: see replicas.go), by WAIT n ReplicaTimeout; a
// lease is granted only once n replicas acknowledged it, else the lock is
// taken back and the error wraps strategy.ErrNotReplicated. With n =
// every replica and a failover that promotes the most up-to-date one, a
// promoted replica holds every granted lease (docs/replicas.md).
//
// # Weaknesses
//
//   - The lock lives on one node. A primary that fails over to a replica
//     before the replica received the SET (replication is asynchronous)
//     lets a second client take it: two holders (see Replicas). Use
//     redlock over independent masters where that matters. The same
//     failover can reset the fencing counter to an older value, and a
//     counter made anew from a clock stepped back (NTP, a VM restore) can
//     issue a lower token.
//   - Safety ends at the TTL: a holder paused (GC, swap) past Deadline can
//     still act on the resource unless the resource checks the fence.
//   - A dead waiter at the head of the line holds the free lock back for up
//     to LineStale, or LineListened when its process froze or its host
//     vanished with its connections open (Redis still counts its
//     subscription). One that died within HandOffRecent of a release, or
//     whose Locker still listens on the key's inbox (another of its
//     waiters waits, or the subscription lingers for notify.Linger), can be
//     handed the lock and keeps it until its TTL, like a dead holder. A
//     waiter whose Lock gives up passes a lock handed to it on, in Abandon.
//   - Through a pool to one master of a Redis Cluster, NUMSUB counts that
//     node's subscribers only, so a head that listens elsewhere keeps its
//     place by attempting every LineStale/2 (through a cluster.Pool the
//     scripts count shard subscribers on the lock's master, where every
//     Locker subscribes). A subscription that stops counting on the server
//     unnoticed can lose a waiter its place.
//   - Nothing else may write to <lock>:line, <lock>:seen or the channels
//     <lock>:notice:*: a forged "handoff:" notice would make a waiter
//     believe it holds the lock. For the same reason no name of yours may
//     end in ":fence", ":line" or ":seen" while it carries its own {tag}:
//     "{x}:line" would be the line of the lock "x".
package luarelease

// Package watchmulti is a single-node Redis lock that acquires with an
// atomic SET NX EX and releases with an optimistic WATCH/MULTI/EXEC
// transaction that deletes the lock only while it still holds the owner's
// token.
//
//	import watchmulti "github.com/lockzoo/lockzoo/watch_multi"
//
// It reproduces the second version in article 000
// (seeds/000_ed7161a2a0b1d845.txt): the one written for Redis 2.6.12 and
// later, where acquire is `conn.set(lockname, identifier, ex=lock_timeout,
// nx=True)` and release is the redis-py pipeline loop around WATCH, GET,
// MULTI, DEL and EXEC that starts over on WatchError.
//
// # Algorithm
//
//  1. Acquire: SET <prefix><key> <token> NX EX <ttl s>. The TTL is sent in
//     whole seconds rounded up, as the article's int(math.ceil(lock_timeout))
//     does: a 1.5 s TTL becomes EX 2, a 1 ms TTL becomes EX 1. "OK" means the
//     lock is ours; a nil reply means someone else holds it (ErrNotAcquired).
//     The lease's Deadline counts the TTL asked for, not the rounded one, so
//     it never runs past the key's expiry.
//  2. Lock repeats step 1 until it succeeds or ctx ends (the article sleeps
//     1 ms between attempts). lockzoo's common waiting policy applies: this
//     Locker's waiters for one key queue in FIFO order, and the first retries
//     when a release notice arrives or Config.Retry's wait (250 µs growing to
//     4 ms by default) ends.
//  3. Release, on one connection:
//     a. WATCH key, then GET key (two round trips, as redis-py's immediate
//     mode sends them).
//     b. If the value is not our token, UNWATCH and return ErrNotHeld: the
//     lock expired or someone else holds it now.
//     c. Otherwise send MULTI, DEL key, PUBLISH <prefix><key>:notice, EXEC
//     together (one round trip, like redis-py's pipe.execute(); the PUBLISH
//     is lockzoo's release notice for waiters, not the article's). If the key was written after WATCH, Redis
//     aborts the transaction (EXEC replies nil, redis-py's WatchError) and
//     the release starts over at a.; the next GET sees the new value and
//     step b. returns ErrNotHeld, or, if the key still holds our token, the
//     next transaction deletes it.
//  4. Extend: the same transaction with PEXPIRE key <ttl ms> instead of DEL.
//
// An uncontended release costs three round trips: WATCH, GET, and the
// pipelined MULTI/DEL/EXEC. A release that finds the lock gone also costs
// three (WATCH, GET, UNWATCH). Each retry after an abort adds three more.
// The fault points fault.WatchMultiReleaseAfterWatch and
// fault.WatchMultiExtendAfterWatch mark each pass of the loop right after a
// GET that matched, before MULTI is sent.
//
// # Weaknesses
//
// Release and extend are owner-safe: between WATCH and EXEC no write to the
// key can slip past, so a lock that expired and was taken by another client
// is never deleted or extended. The price is round trips: three to release
// where lua_release needs one, and the connection stays busy for all of
// them. Acquire TTLs have one-second granularity, so a lock lives up to a
// second longer than asked, and a crashed holder blocks others for that
// long. The lock lives on one Redis node: a failover to a replica that had
// not yet received the SET loses it, and two clients can hold it. Its
// safety ends at its TTL; a holder paused past Deadline can still act on
// the protected resource, and the lock issues no fencing tokens.
//
// Under maxmemory with the noeviction policy, once Redis is over its limit
// it refuses the DEL queued in the release's MULTI with an OOM error, so
// Unlock (and Extend) fail and the lock stays until its TTL runs out
// (TestUnlockOutOfMemory).
//
// The release uses WATCH on a connection from the pool; when it returns
// early (a fault hook, a cancelled ctx) redigo's *redis.Pool sends UNWATCH
// when the connection goes back to the pool. A custom strategy.Pool must do
// the same or close such connections.
package watchmulti

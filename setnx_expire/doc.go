// Package setnxexpire is a single-node Redis lock that acquires with SETNX
// followed by a separate EXPIRE, repairs locks left without a TTL while it
// waits, and releases with an owner-checked WATCH/MULTI/EXEC transaction.
//
//	import setnxexpire "github.com/lockzoo/lockzoo/setnx_expire"
//
// It reproduces the first version in article 000
// (seeds/000_ed7161a2a0b1d845.txt), written for Redis before 2.6.12, whose
// SET had no NX and EX options: acquire is `conn.setnx(lockname,
// identifier)` then `conn.expire(lockname, lock_timeout)`, and a waiter that
// finds `conn.ttl(lockname) == -1` sets the expiry itself.
//
// # Algorithm
//
//  1. Acquire: SETNX <prefix><key> <token>. On 1 the key is ours: send
//     EXPIRE <prefix><key> <ttl s> as a second command and return the
//     lease. The TTL is sent in whole seconds rounded up, as the article's
//     int(math.ceil(lock_timeout)) does: 300 ms becomes EXPIRE 1, 1.5 s
//     becomes EXPIRE 2. The fault point fault.SetNXExpireAcquireAfterSetNX
//     marks the moment between the two commands.
//  2. On 0 someone holds the key: send TTL <prefix><key>, and if it replies
//     -1 (a key with no expiry) send EXPIRE <prefix><key> <ttl s> to repair
//     it, as the article's loop does; then report ErrNotAcquired. TryLock
//     makes this attempt once; Lock repeats it under Config.Retry (the
//     article sleeps 1 ms; the default Retry starts at 250 µs and grows to
//     4 ms) until it succeeds or ctx ends.
//  3. Release, on one connection:
//     a. WATCH key, then GET key (two round trips, as redis-py's immediate
//     mode sends them).
//     b. If the value is not our token, UNWATCH and return ErrNotHeld: the
//     lock expired or someone else holds it now.
//     c. Otherwise (fault point fault.SetNXExpireReleaseAfterWatch) send
//     MULTI, DEL key, EXEC together, one round trip, like redis-py's
//     pipe.execute(). If the key was written after WATCH, Redis aborts the
//     transaction (EXEC replies nil, redis-py's WatchError) and the release
//     starts over at a.
//  4. Extend: the same transaction with EXPIRE key <ttl s>, the TTL again
//     rounded up to whole seconds (fault point
//     fault.SetNXExpireExtendAfterWatch).
//
// An uncontended acquire costs two round trips (SETNX, EXPIRE); a failed
// attempt costs two (SETNX, TTL) or three when it repairs. An uncontended
// release costs three (WATCH, GET, the pipelined MULTI/DEL/EXEC). The
// lease's Deadline counts the TTL asked for, not the rounded one, so it
// never runs past the key's expiry.
//
// # Waiting and release notices
//
// Lock follows lockzoo's common waiting policy: this Locker's goroutines
// waiting for one key queue in FIFO order and only the first contends in
// Redis; it retries when a release notice arrives, or when Config.Retry's
// wait (250 µs growing to 4 ms by default) ends. Release publishes an empty
// notice on <prefix><key>:notice in the same round trip as its
// delete (inside the MULTI/EXEC, after the DEL). The notice is lockzoo's addition, not the article's; the
// acquire and release steps are otherwise the article's.
//
// # Weaknesses
//
// Acquire is not atomic. A client that dies, or loses its connection,
// between SETNX and EXPIRE leaves a key with no TTL: an immortal lock. Only
// a contender repairs it (step 2), so the lock stays taken until someone
// else tries for it and then for a whole TTL more; with no contender it
// stays forever. The repair itself is blind: a contender that reads TTL -1
// while the holder is between its two commands sets the expiry for it,
// which is harmless only because every client uses the same TTL. Nor does
// the repair check whose key it is: a key of the same name that another
// application wrote without a TTL (a hash, say) gets one from the first
// waiter and then vanishes with its data (TestRepairExpiresForeignKey).
//
// TTLs have one-second granularity, so a lock lives up to a second longer
// than asked and a crashed holder blocks others for that long.
//
// Release and extend are owner-safe: between WATCH and EXEC no write to the
// key can slip past, so a lock that expired and was taken by another client
// is never deleted or extended. The lock lives on one Redis node: a
// failover to a replica that had not yet received the SETNX or the EXPIRE
// loses the lock or its expiry. Its safety ends at its TTL; a holder paused
// past Deadline can still act on the protected resource, and the lock
// issues no fencing tokens.
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
package setnxexpire

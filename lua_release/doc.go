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
// # Algorithm
//
//  1. Acquire: one script, SET <prefix><key> <token> NX PX <ttl ms>; when it
//     succeeds the script also INCRs the key's fencing counter
//     (FenceKey, never expiring) and returns it: Lease.Fence(). When the
//     key is held it returns the holder's PTTL instead (ErrNotAcquired).
//     The value and the expiry are written in one command, so a client that
//     dies right after acquiring still leaves a lock that expires.
//  2. Lock repeats step 1 until it succeeds or ctx ends. This Locker's
//     goroutines waiting for one key queue in FIFO order and only the first
//     contends in Redis; it retries when the lock is released (a local
//     Unlock, or a notice published by another client's release, received
//     on one pub/sub connection per Locker), when the holder's reported TTL
//     runs out, or when Config.Retry's wait ends (by default jittered waits
//     from 250 µs growing to 4 ms), whichever comes first.
//  3. Release: one script, if GET key == token then DEL key and PUBLISH an
//     empty notice on lockzoo:released:<prefix><key>. Redis runs a script
//     atomically, so no other client can take the lock between the compare
//     and the delete; a lock that expired and was taken by someone else is
//     left alone and Unlock returns ErrNotHeld.
//  4. Extend: one script, if GET key == token then PEXPIRE key ttl.
//
// Each operation is one round trip. Scripts run with EVALSHA, falling back
// to EVAL once when the server has not cached them (NOSCRIPT).
//
// Fencing tokens strictly increase across successive holders of a key as
// long as the node keeps its data: each successful acquire increments the
// counter in the same atomic step that sets the lock. Pass Fence() to the
// resource you protect (see package fencing) so that a holder paused past
// its TTL cannot overwrite a newer holder's work.
//
// # Weaknesses
//
// The lock lives on one Redis node. If that node is a primary that fails
// over to a replica before the replica received the SET (replication is
// asynchronous), the new primary has no lock and a second client can take
// it: two holders. Use redlock over independent masters where that matters.
// The same failover can reset the fencing counter to an older value. The
// lock's safety also ends at its TTL: a holder paused (GC, swap) past
// Deadline can still act on the protected resource unless that resource
// checks the fencing token. Waiters in other processes are not queued: the
// FIFO order holds among one Locker's goroutines only.
package luarelease

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
//  1. Acquire: SET <prefix><key> <token> NX PX <ttl ms>. "OK" means the lock
//     is ours; a nil reply means someone else holds it (ErrNotAcquired).
//     The value and the expiry are written in one command, so a client that
//     dies right after acquiring still leaves a lock that expires.
//  2. Lock repeats step 1 under Config.Retry (by default jittered waits from
//     250 µs growing to 4 ms) until it succeeds or ctx ends.
//  3. Release: one script, if GET key == token then DEL key. Redis runs a
//     script atomically, so no other client can take the lock between the
//     compare and the delete; a lock that expired and was taken by someone
//     else is left alone and Unlock returns ErrNotHeld.
//  4. Extend: one script, if GET key == token then PEXPIRE key ttl.
//
// Each operation is one round trip. Scripts run with EVALSHA, falling back
// to EVAL once when the server has not cached them (NOSCRIPT).
//
// # Weaknesses
//
// The lock lives on one Redis node. If that node is a primary that fails
// over to a replica before the replica received the SET (replication is
// asynchronous), the new primary has no lock and a second client can take
// it: two holders. Use redlock over independent masters where that matters.
// The lock's safety also ends at its TTL: a holder paused (GC, swap) past
// Deadline can still act on the protected resource unless that resource
// checks a fencing token.
package luarelease

// Package fencing guards a resource kept in Redis with fencing tokens: a
// write is accepted only when its token is at least the highest token the
// resource has seen, checked and applied atomically in one Lua script.
//
//	import "github.com/lockzoo/lockzoo/fencing"
//
// A lock lease can expire while its holder is paused (a GC pause, a swapped
// out process, a slow network); the holder then wakes up and writes as if it
// still held the lock. When every write carries the lease's Fence() and the
// resource rejects tokens older than one it has seen, the stale write is
// refused instead of overwriting the newer holder's work (Martin Kleppmann,
// "How to do distributed locking", 2016).
//
// Algorithm, one round trip per write:
//
//  1. EVALSHA the guard script with the resource's key, the token and the
//     value;
//  2. the script reads the highest token stored in the resource's hash;
//  3. if the new token is lower it replies 0 and changes nothing
//     (ErrStaleToken); otherwise it stores the value and the token and
//     replies 1.
//
// Tokens from a technique that issues none are 0: every such write passes,
// which is exactly the unprotected behaviour the race-condition suite
// demonstrates.
//
// The resource is the one key given to NewResource, used as it is: give it
// a key under the Locker's Config.Prefix, and an ACL that confines a
// service to its prefix (~<prefix>* &<prefix>*) covers the resource too.
// It is the caller's data, so it carries no expiry. lua_release's and
// redlock's tokens are large numbers (a new key's first token is the Redis
// server's clock in µs) that only increase; compare them, never expect
// the next to be one more.
package fencing

// Package setnxex is a single-node Redis lock that acquires with an atomic
// SET NX EX and releases with a GET, a compare in the client, and a separate
// DEL: the owner check and the delete are two commands, not one.
//
//	import setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
//
// It reproduces article 002 (seeds/002_814ac43211df8e29.txt), whose last
// snippet locks with `redis.set(name=锁名, value=加锁人, nx=True,
// ex=超时时间_秒)` and unlocks by the lock holder's name (加锁人); the stored
// text is cut off inside the unlock function, so the release follows the
// shape that function's signature and lockzoo's design name: read the
// value, compare it with the holder's, delete. The acquire is also the SET
// NX EX of article 000's second version (seeds/000_ed7161a2a0b1d845.txt),
// whose int(math.ceil(lock_timeout)) gives the rounding below.
//
// # Algorithm
//
//  1. Acquire: SET <prefix><key> <token> NX EX <ttl s>, with the TTL in
//     whole seconds rounded up (1.5 s becomes EX 2, 1 ms becomes EX 1). "OK"
//     means the lock is ours; a nil reply means someone else holds it
//     (ErrNotAcquired). The lease's Deadline counts the TTL asked for, not
//     the rounded one.
//  2. Lock repeats step 1 under Config.Retry until it succeeds or ctx ends.
//  3. Release: GET key. If the value is not our token, return ErrNotHeld.
//     Otherwise DEL key, a second command. A DEL that deletes nothing (the
//     key expired in between) also returns ErrNotHeld.
//  4. Extend: GET key, compare, then EXPIRE key <ttl s> (rounded up like
//     acquire). An EXPIRE on a missing key returns ErrNotHeld.
//
// Acquire costs one round trip, release and extend two each. The fault
// points fault.SetNXExReleaseAfterGet and fault.SetNXExExtendAfterGet mark
// the moment between the GET that matched and the DEL or EXPIRE.
//
// # Waiting and release notices
//
// Lock follows lockzoo's common waiting policy: this Locker's goroutines
// waiting for one key queue in FIFO order and only the first contends in
// Redis; it retries when a release notice arrives, or when Config.Retry's
// wait (250 µs growing to 4 ms by default) ends. Release publishes an empty
// notice on <prefix><key>:notice in the same round trip as its
// delete (pipelined with the DEL). The notice is lockzoo's addition, not the article's; the
// acquire and release steps are otherwise the article's.
//
// # Weaknesses
//
// Release is not owner-safe. Between the GET and the DEL the lock can
// expire and another client B can take it; the DEL then deletes B's lock,
// and Unlock reports success because DEL deleted a key. A third client C
// can now take the lock while B, whose Deadline has not passed, still
// believes it holds it: two holders. Extend has the same window: its EXPIRE
// can prolong B's lock, and the stale holder's Deadline moves as if the
// lock were still its own. The window is one round trip wide, and a GC or
// scheduling pause in the client widens it arbitrarily. The package's tests
// reproduce both cases; use lua_release, which does the compare and the
// delete in one script, or watch_multi.
//
// TTLs have one-second granularity, so a lock lives up to a second longer
// than asked. The lock lives on one Redis node: a failover to a replica
// that had not yet received the SET loses it. It issues no fencing tokens.
package setnxex

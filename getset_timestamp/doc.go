// Package getsettimestamp is a single-node Redis lock whose value is the
// holder's expiry time by its own clock, taken with SETNX and taken over
// with GETSET once that time has passed.
//
//	import getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
//
// It reproduces method 3 of article 004 (seeds/004_71dbfce13b13b903.txt),
// the classic pre-2.6.12 recipe: `setnx(lock_key, now + timeout + 1)`, and
// when that fails, `now > int(get(lock_key)) and now > int(getset(lock_key,
// new))`. The key has no Redis TTL at all, as in the article: a lock ends
// only when a client's clock says its stored time has passed.
//
// # Algorithm
//
// The value is an expiry time in Unix milliseconds (decimal), read from
// Config.Clock (time.Now by default). The article writes Unix seconds plus
// one extra second, which it explains as cover for Redis 2.4 reading
// expired keys up to a second late; this package sets no Redis expiry, and
// Redis since 2.6 expires keys within a millisecond anyway, so it writes
// exactly now + TTL. The owner token of Config.Token is not used: the
// stored time is the only value, and Lease.Token returns it.
//
//  1. Acquire: SETNX <prefix><key> <now+ttl>. On 1 the lock is ours.
//  2. On 0 (fault point fault.GetSetTimestampAcquireBeforeGet), GET the key.
//     If the stored time has not passed by this client's clock the lock is
//     held: ErrNotAcquired.
//  3. If it has passed (fault point fault.GetSetTimestampAcquireBeforeGetSet),
//     GETSET <prefix><key> <now+ttl>. The lock is ours only if the old value
//     GETSET returns has passed too; otherwise another waiter's GETSET came
//     first and this one reports ErrNotAcquired, having overwritten that
//     waiter's time.
//  4. Lock repeats the attempt under Config.Retry until it succeeds or ctx
//     ends (the article sleeps 1 ms; the default Retry starts at 250 µs and
//     grows to 4 ms).
//  5. Release: if this client's clock says the lease's own expiry time has
//     not passed, DEL the key (fault point
//     fault.GetSetTimestampReleaseAfterCheck between the check and DEL).
//     Otherwise the key is left alone and Unlock returns ErrNotHeld; so does
//     a DEL that found no key.
//  6. Extend: GETSET the key to now + ttl. The old value tells whether the
//     lock was still ours: the lease's own time means success, and the
//     lease's Token and Deadline move to the new time. Anything else is
//     ErrNotHeld, but the GETSET has already written the new time.
//
// Uncontended, acquire and release each cost one round trip. A failed
// attempt costs two (SETNX, GET), and a takeover three. Lease.Deadline is
// the stored expiry time measured with Config.Clock, counted from the
// attempt's start.
//
// The cases the article gets wrong never panic and never count as a win by
// accident:
//
//   - The key is deleted between the failed SETNX and GET (the article's
//     int(None) crash): GET returns nil, and the attempt starts over at
//     SETNX, at most twice; if the key is taken again each time, the
//     attempt returns ErrNotAcquired.
//   - The key is deleted between GET and GETSET: GETSET returns nil, having
//     written into an empty key just as SETNX would have, and the attempt
//     wins, as the article's `or 0` fix decides.
//   - The key holds a value that is not a timestamp (another application's
//     key): GET shows it, and the attempt returns an error wrapping
//     ErrNotTimestamp that names the key and the value, without writing
//     anything. It does not match ErrNotAcquired; Lock retries it until ctx
//     ends and reports it as the last failure.
//
// There is a residual window: GETSET writes before it can show the old
// value, so a foreign value written between GET and GETSET is overwritten.
// When GETSET returns such a value, the attempt writes it back at once,
// under WATCH and only while the key still holds the time it wrote, and
// returns an error wrapping ErrNotTimestamp; any TTL the foreign key had is
// lost. Extend, which sends GETSET without a GET, does the same when the
// old value is not a timestamp.
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
// Clients' clocks decide everything (ClockSafe is false). A client whose
// clock runs ahead sees a live lock as expired and takes it over with
// GETSET while its holder still works: two holders. A client whose clock
// runs behind writes an expiry others already see as passed, and, by its
// own clock, still believes its lock is live after others took it over, so
// its Unlock deletes the next holder's lock.
//
// There is no owner check (OwnerSafeRelease is false): Unlock deletes
// whatever the key holds, and Extend's GETSET overwrites whatever the key
// holds. A holder that overruns its time can delete its successor's lock
// between the clock check and DEL. When several waiters race for an
// expired lock, only one wins, but every loser's GETSET has already written
// its own time over the winner's, so the stored time no longer matches the
// winner's Token and the lock ends when the last loser's time passes.
//
// The key never expires in Redis: a crashed holder's lock is freed only by
// a contender's GETSET once its time passes. For the same reason an
// acquire whose reply is lost (a timeout after the SETNX was sent) is not
// taken back, as the other techniques take theirs back: a release without
// an owner check could delete another client's lock, so the lock stays
// until its stored time passes. The lock lives on one Redis
// node, its safety ends at its stored time, and it issues no fencing
// tokens.
package getsettimestamp

// Package method2 is a single-node Redis lock whose value is the holder's
// expiry time by its own clock, taken with SETNX and, once that time has
// passed, with DEL and SETNX again: method 2 of article 004. It exists to
// show why getset_timestamp (the article's method 3) exists; do not use it
// to protect anything.
//
//	import "github.com/lockzoo/lockzoo/getset_timestamp/method2"
//
// # The article's code
//
// Article 004 (seeds/004_71dbfce13b13b903.txt), "實現方法二", adds a
// timeout to method 1 (package method1) so that a dead holder's lock ends:
// `setnx(key, <now + lock timeout + 1>)`, the key's value being the time
// the lock ends:
//
//	lock_key = "distribute_lock"
//	def get_lock():
//	    while True:
//	        lock = redis_client.setnx(lock_key, <now + lock timeout + 1>)
//	        if lock:  # set: the lock is ours
//	            break
//	        now_time = <current Unix time + lock timeout + 1>
//	        lock_time_out = redis_client.get(lock_key)
//	        if now_time > lock_time_out:  # has it timed out?
//	            redis_client.delete(lock_key)  # timed out: delete, set again
//	            lock = redis_client.setnx(lock_key, <now + lock timeout + 1>)
//	        if lock:
//	            break
//	        else:
//	            time.sleep(0.5)
//	    return True
//	if get_lock():
//	    # do your work on the critical resource
//	    redis_client.delete(lock_key)
//
// The article then tells what goes wrong: p1 holds the lock while p2 and
// p3 keep checking whether it has timed out; p1 dies; after a while p2 and
// p3 both see it timed out (`now_time > lock_time_out`); p2 deletes the
// key, sets its own time and holds the lock; p3, slower, also deletes the
// key, which is in fact p2's lock, and sets its own: p2 and p3 both hold
// the lock. Method 3 (getset_timestamp) answers it with GETSET.
//
// The code's placeholder `now_time = <current Unix time + lock timeout +
// 1>`, read literally, would find every lock timed out the moment it was
// taken; the article's own story ("both detect that the lock has timed
// out") and its method 3 compare the current time with the stored one,
// and so does this package.
//
// # Algorithm
//
// The value is an expiry time in Unix milliseconds (decimal), read from
// Config.Clock (time.Now by default), as getset_timestamp writes it: the
// article writes Unix seconds plus one extra second for Redis 2.4's late
// expiries, which do not concern a key with no Redis TTL. The key has no
// Redis TTL at all, as in the article: a lock ends only when a client's
// clock says its stored time has passed.
//
//  1. Acquire: SETNX <prefix><key> <now+ttl>. On 1 the lock is ours.
//  2. On 0 (fault point fault.GetSetTimestampMethod2AcquireBeforeGet), GET
//     the key. If the stored time has not passed by this client's clock,
//     the lock is held: strategy.ErrNotAcquired. A value that is not a
//     timestamp (another application's key) returns an error wrapping
//     ErrNotTimestamp, and nothing is deleted. A GET that finds no key
//     (released since the SETNX: the article's int(None) crash, which its
//     method 3 answers with `or 0`) means the lock is free: the attempt
//     goes on to step 3 without the DEL, which could only delete a lock
//     another client took since the GET.
//  3. If it has passed (fault point
//     fault.GetSetTimestampMethod2AcquireAfterGet, the window of the
//     article's story), DEL the key, whatever it now holds, then (fault
//     point fault.GetSetTimestampMethod2AcquireAfterDel) SETNX <now+ttl>
//     again. On 1 the lock is ours; on 0 another client set it in between,
//     and the attempt reports strategy.ErrNotAcquired.
//  4. Lock repeats the attempt under Config.Retry until it succeeds or ctx
//     ends; the default is the article's fixed 0.5 s (RetryEvery).
//  5. Release: DEL <prefix><key>, whatever it holds and whatever the clock
//     says. It reports strategy.ErrNotHeld only when the key was already
//     gone.
//  6. Extend: none in the article; it returns strategy.ErrUnsupported.
//
// Uncontended, acquire and release each cost one round trip; a failed
// attempt costs two (SETNX, GET), and a takeover four. Lease.Deadline is
// the stored expiry time measured with Config.Clock, counted from the
// attempt's start.
//
// # Waiting and release notices
//
// Lock follows lockzoo's common waiting policy: this Locker's goroutines
// waiting for one key queue in FIFO order and only the first contends in
// Redis; it retries when a release notice arrives, or when Config.Retry's
// wait ends. Release publishes an empty notice on <prefix><key>:notice in
// the same round trip as its DEL. The notice is lockzoo's addition; the
// acquire and release commands are the article's.
//
// # Weaknesses
//
// Two waiters that both saw the stored time passed both DEL and SETNX: the
// second DEL deletes the first one's fresh lock, and both hold it (the
// article's p2 and p3; see TestP2P3BothHold). This race breaks mutual
// exclusion, so Properties does not claim MutualExclusion: it holds only
// while no lock expires with waiters around. strategytest's
// expired-takeover scenario shows it violated, where getset_timestamp
// holds.
//
// Clients' clocks decide everything (ClockSafe is false): a client whose
// clock runs ahead sees a live lock as expired, deletes it and takes it.
//
// There is no owner check (OwnerSafeRelease is false): Unlock deletes
// whatever the key holds, so a holder that overran its time deletes the
// next holder's lock, reporting success.
//
// The key never expires in Redis: a dead holder's lock stays until a
// contender's clock says its time has passed and deletes it. For the same
// reason an acquire whose reply is lost is not taken back, as the
// owner-checked techniques take theirs back: the release checks no owner,
// so a take-back could delete another client's lock; the lock stays until
// its stored time passes and a contender deletes it. The lock lives on one
// Redis node, its safety ends at its stored time, and it issues no fencing
// tokens.
package method2

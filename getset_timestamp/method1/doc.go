// Package method1 is a single-node Redis lock taken with SETNX of a
// constant and no expiry, and released with a plain DEL: method 1 of
// article 004, the same as article 003's RedisLock. It exists to show why
// the later techniques exist; do not use it to protect anything.
//
//	import "github.com/lockzoo/lockzoo/getset_timestamp/method1"
//
// # The articles' code
//
// Article 004 (seeds/004_71dbfce13b13b903.txt), "實現方法一", writes:
//
//	lock_key = "distribute_lock"
//	def get_lock():
//	    while True:
//	        lock = redis_client.setnx(lock_key, 1)
//	        if lock:  # set: the lock is ours
//	            break
//	        else:
//	            time.sleep(0.5)  # not ours: wait 0.5 s and try again
//	    return True
//	if get_lock():
//	    # do your work on the critical resource
//	    redis_client.delete(lock_key)  # release at once to avoid a deadlock
//
// and asks what is wrong with it: if the process dies while it holds the
// lock, or the connection drops before the delete, the lock is never
// released, a deadlock. Article 003 (seeds/003_82f4352895d780c9.txt)
// wraps the same two commands in a class, RedisLock, whose acquire is
// `setnx(self.lock_key, self.lock_value)` and whose release is
// `delete(self.lock_key)`, and names the same weakness. Article 004's
// method 2 (package method2) adds a timeout to answer it, and its method 3
// is getset_timestamp.
//
// # Algorithm
//
//  1. Acquire: SETNX <prefix><key> 1. On 1 the lock is ours; on 0 the key
//     exists, whoever wrote it, and the attempt reports
//     strategy.ErrNotAcquired. The key gets no expiry: Config.TTL is never
//     sent to Redis (it only sets Lease.Deadline, TTL after the attempt
//     began, a bound lockzoo's contract asks for and the article lacks).
//     Every holder writes the same 1 (article 004's value; article 003
//     leaves the value to its caller), so Lease.Token is "1" for all.
//  2. Lock repeats the attempt under Config.Retry until it succeeds or ctx
//     ends; the default is the article's fixed 0.5 s (RetryEvery).
//  3. Release: DEL <prefix><key>, whatever it holds. It reports
//     strategy.ErrNotHeld only when the key was already gone.
//  4. Extend: none in the article, and no expiry to move; it returns
//     strategy.ErrUnsupported.
//
// Acquire and release each cost one round trip.
//
// # Waiting and release notices
//
// Lock follows lockzoo's common waiting policy: this Locker's goroutines
// waiting for one key queue in FIFO order and only the first contends in
// Redis; it retries when a release notice arrives, or when Config.Retry's
// wait ends. Release publishes an empty notice on <prefix><key>:notice in
// the same round trip as its DEL. The notice is lockzoo's addition; the
// acquire and release commands are the articles'.
//
// # Weaknesses
//
// The key never expires (AtomicAcquire is false: no expiry is ever set).
// A holder that dies, or whose DEL is lost, leaves the lock held forever:
// no waiter can take it, and Lock with a context that never ends waits
// forever. Only a DEL by someone frees it. For the same reason an acquire
// whose reply is lost (a timeout after the SETNX was sent) is not taken
// back, as the owner-checked techniques take theirs back: the release
// checks no owner, so a take-back could delete another client's lock; the
// lock is then held by nobody, for good. Everything this package writes
// must be deleted by someone; its tests delete what they leave.
//
// There is no owner (OwnerSafeRelease is false): any client's DEL releases
// the lock, and a holder whose lock was deleted and taken by another
// deletes that client's lock with its own Unlock, reporting success.
//
// It reads no clock (ClockSafe is true). The lock lives on one Redis node
// and issues no fencing tokens.
package method1

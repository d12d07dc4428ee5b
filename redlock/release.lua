-- release: one node's part of a Redlock release. It starts with the
-- prelude, the protocol's constants (STALE, LISTENED, RECENT, RETENTION,
-- in ms; constants in redlock.go) and handOn (protocol.HandOnSource).
-- KEYS the lock, its fencing counter, its line of waiters and their
-- last-seen times (protocol.Keys; boxed once per lease, from the acquire);
-- ARGV[1] the owner's token, and ARGV[2] and ARGV[3] (only for a failed
-- attempt's undo) the ticket and line member of a waiter to put back in
-- line, or ARGV[2] "-" alone for a plain release: one paid late (owed),
-- when the head of the line may be a waiter that is gone, deletes the
-- lock and tells the head, and hands nothing. The lock's notice channel (protocol.Channel) is the lock's key and
-- ":notice", built here.
-- Only if the lock still holds the token: when nobody waits, the plain
-- delete. A release passes the lock on to the head of the line (handOn):
-- to a live head it is handed, set to the waiter's name with the next
-- fencing token and a hand-off notice to its Locker, which holds the lock
-- once a quorum of nodes handed it theirs; else it is deleted and the
-- head told to try. A failed attempt's undo deletes the lock and puts its
-- waiter back in the line, where its SET took it out; then, when anyone
-- else heads the line, it tells that waiter to try (an undo hands
-- nothing: the waiter whose vote it takes back may be the head).
-- Replies 1 when deleted or handed on, 0 when the lock was missing or
-- someone else's.
local lock, line, seen, requeue = KEYS[1], KEYS[3], KEYS[4], ARGV[3]
if redis.call("GET", lock) ~= ARGV[1] then
	return 0
end
if not ARGV[2] then
	if redis.call("EXISTS", line) == 0 then
		redis.call("DEL", lock)
	else
		handOn(lock, KEYS[2], line, seen, lock .. ":notice", STALE, LISTENED, RECENT, RETENTION)
	end
	return 1
end
redis.call("DEL", lock)
if requeue then
	local L = waitLine()
	L.join(line, seen, ARGV[2], requeue, L.nowMs(), LISTENED)
end
-- An undo does not wake its own waiter: it retries on its own timer. (The
-- range is given as strings: a Lua number costs Redis a conversion.)
local head = redis.call("ZRANGE", line, "0", "0")[1]
if head and head ~= requeue then
	waitLine("notice").tellHead(line, seen, lock .. ":notice", requeue, head)
end
return 1

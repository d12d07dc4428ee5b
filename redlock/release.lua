-- release: one node's part of a Redlock release. It starts with the
-- prelude (package protocol) and the protocol's constants (LISTENED, in
-- ms, is the one it reads; constants in redlock.go).
-- KEYS the lock, its fencing counter (unused: the keys are the ones the
-- acquire passed, boxed once per lease), its line of waiters and their
-- last-seen times (protocol.Keys); ARGV[1] the owner's token, and ARGV[2]
-- and ARGV[3] (only for a failed attempt's undo) the ticket and line
-- member of a waiter to put back in line. The lock's notice channel
-- (protocol.Channel) is the lock's key and ":notice", built here.
-- Deletes the lock only if it still holds the token. A failed attempt's
-- undo then puts its waiter back in the line, where its SET took it out.
-- Then, when anyone else waits, publishes a head notice to the inbox of
-- the head's Locker, so that only the waiter whose turn it is hurries.
-- Replies 1 when deleted, 0 when the lock was missing or someone else's.
local lock, line, seen, requeue = KEYS[1], KEYS[3], KEYS[4], ARGV[3]
if redis.call("GET", lock) ~= ARGV[1] then
	return 0
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

-- release: one node's part of a Redlock release. The line's Lua
-- (line.Source: waitLine, takeFence and release) and the
-- constants (STALE, LISTENED, RECENT, RETENTION in ms; see useRetention)
-- come in front.
-- KEYS the lock, its fencing counter, its line and the waiters' last-seen
-- times (protocol.Keys). ARGV[1] the owner's token; for a failed attempt's
-- undo, ARGV[2] and ARGV[3] the ticket and line member of the waiter to
-- put back in line; or ARGV[2] "-" alone for an owed release paid late,
-- which deletes and tells the head but hands nothing (the head may be gone).
-- Only while the lock holds the token: a release is line.lua's release (a
-- plain delete with nobody waiting, else the lock passed on to the head
-- of the line, handOn). An undo deletes, requeues its waiter and tells
-- any other head to try.
-- Replies 1 when deleted or handed on, 0 when missing or someone else's.
if not ARGV[2] then
	return release(KEYS, ARGV[1], nil, STALE, LISTENED, RECENT, RETENTION)
end
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

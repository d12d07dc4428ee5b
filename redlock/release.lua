-- release: one node's part of a Redlock release. It starts with the
-- prelude (package protocol).
-- KEYS[1] the lock, KEYS[2] its line of waiters, KEYS[3] their last-seen
-- times; ARGV[1] the owner's token, ARGV[2] (optional) the lock's notice
-- channel (protocol.Channel), ARGV[3] protocol.Stale in ms, ARGV[4] and
-- ARGV[5] (optional) the ticket and line member of a waiter to put back in
-- line.
-- Deletes the lock only if it still holds the token. A failed attempt's
-- undo then puts its waiter back in the line, where its SET took it out.
-- Then, when a channel is given and anyone else waits, publishes a head
-- notice to the inbox of the head's Locker, so that only the waiter whose
-- turn it is hurries. Replies 1 when deleted, 0 when the lock was missing
-- or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
if ARGV[5] then
	local L = waitLine()
	L.join(KEYS[2], KEYS[3], ARGV[4], ARGV[5], L.nowMs(), tonumber(ARGV[3]))
end
if ARGV[2] then
	-- An undo does not wake its own waiter: it retries on its own timer.
	local head = redis.call("ZRANGE", KEYS[2], 0, 0)[1]
	if head and head ~= ARGV[5] then
		waitLine("notice").tellHead(KEYS[2], KEYS[3], ARGV[2], ARGV[5], head)
	end
end
return 1

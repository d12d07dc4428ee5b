-- release: one node's part of a Redlock release.
-- KEYS[1] the lock, KEYS[2] its line of waiters, KEYS[3] their last-seen
-- times; ARGV[1] the owner's token, ARGV[2] (optional) the key's
-- release-notice channel, ARGV[3] LineStale in ms, ARGV[4] and ARGV[5]
-- (optional) the ticket and line member of a waiter to put back in line.
-- Deletes the lock only if it still holds the token. A failed attempt's
-- undo then puts its waiter back in the line, where its SET took it out.
-- Then, when a channel is given and anyone else waits, publishes
-- "head:<waiter>" to the inbox of the head's Locker (channel .. "/" ..
-- locker; line members are "<locker>/<waiter>"), so that only the waiter
-- whose turn it is hurries. Replies 1 when deleted, 0 when the lock was
-- missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
if ARGV[5] then
	local t = redis.call("TIME")
	local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	local stale = tonumber(ARGV[3])
	redis.call("ZADD", KEYS[2], "NX", ARGV[4], ARGV[5])
	redis.call("ZADD", KEYS[3], now, ARGV[5])
	redis.call("PEXPIRE", KEYS[2], stale * 4)
	redis.call("PEXPIRE", KEYS[3], stale * 4)
end
if ARGV[2] then
	local head = redis.call("ZRANGE", KEYS[2], 0, 0)[1]
	-- An undo does not wake its own waiter: it retries on its own timer.
	if head and head ~= ARGV[5] then
		local locker, waiter = string.match(head, "^([^/]*)/(.+)$")
		if locker then
			redis.call("PUBLISH", ARGV[2] .. "/" .. locker, "head:" .. waiter)
		end
	end
end
return 1

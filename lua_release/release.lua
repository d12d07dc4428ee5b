-- release: KEYS[1] the lock, KEYS[2] its line of waiters; ARGV[1] the
-- owner's token, ARGV[2] the release-notice channel.
-- Deletes the lock only if it still holds the token, then, when anyone
-- waits in the line, publishes a notice naming the waiter at its head, so
-- that only that waiter hurries. (A waiter in Lock joins the line with its
-- first refused attempt; one that went stale and left it falls back on its
-- timer.) Replies 1 when deleted, 0 when
-- the lock was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
local head = redis.call("ZRANGE", KEYS[2], 0, 0)[1]
if head then
	redis.call("PUBLISH", ARGV[2], head)
end
return 1

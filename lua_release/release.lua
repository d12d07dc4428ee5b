-- release: KEYS[1] the lock, KEYS[2] its line of waiters; ARGV[1] the
-- owner's token, ARGV[2] the release-notice channel.
-- Deletes the lock only if it still holds the token, then publishes a
-- notice naming the waiter at the head of the line (empty when nobody
-- waits), so that only that waiter hurries. Replies 1 when deleted, 0 when
-- the lock was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
redis.call("PUBLISH", ARGV[2], redis.call("ZRANGE", KEYS[2], 0, 0)[1] or "")
return 1

-- release: one node's part of a Redlock release.
-- KEYS[1] the lock, KEYS[2] its line of waiters; ARGV[1] the owner's
-- token, ARGV[2] (optional) the key's release-notice channel.
-- Deletes the lock only if it still holds the token; then, when a channel
-- is given and anyone waits, publishes "head:<waiter>" to the inbox of the
-- head's Locker (channel .. "/" .. locker; line members are
-- "<locker>/<waiter>"), so that only the waiter whose turn it is hurries.
-- Replies 1 when deleted, 0 when the lock was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
if ARGV[2] then
	local head = redis.call("ZRANGE", KEYS[2], 0, 0)[1]
	if head then
		local locker, waiter = string.match(head, "^([^/]*)/(.+)$")
		if locker then
			redis.call("PUBLISH", ARGV[2] .. "/" .. locker, "head:" .. waiter)
		end
	end
end
return 1

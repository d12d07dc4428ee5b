
-- release: KEYS[1] the lock, KEYS[2] its fencing counter, KEYS[3] its line
-- of waiters, KEYS[4] their last-seen times; ARGV[1] the owner's token,
-- ARGV[2] the release-notice channel, ARGV[3] LineStale and ARGV[4]
-- HandOffRecent in ms.
-- Only if the lock still holds the token, passes it on (handOn: to the
-- head of the line, or deletes it) and replies 1; replies 0 when the lock
-- was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1

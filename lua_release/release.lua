-- release: KEYS the lock, its fencing counter, its line and the waiters'
-- last-seen times (protocol.Keys); ARGV[1] the owner's token, ARGV[2]
-- protocol.Stale and ARGV[3] protocol.HandOffRecent in ms, ARGV[4]
-- protocol.FenceRetention in ms. The lock's notice channel is the lock's
-- key + ":notice" (protocol.Channel), built here rather than sent: the
-- client then builds no string for it on every release.
-- Only if the lock still holds the token, passes it on (handOn: to the
-- head of the line, or deletes it) and replies 1; replies 0 when the lock
-- was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[1] .. ":notice", tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
return 1

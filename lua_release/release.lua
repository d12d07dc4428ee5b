-- release: KEYS the lock, its fencing counter, its line and the waiters'
-- last-seen times (protocol.Keys); ARGV[1] the owner's token, ARGV[2] the
-- lock's notice channel (protocol.Channel), ARGV[3] protocol.Stale and ARGV[4]
-- protocol.HandOffRecent in ms, ARGV[5] protocol.FenceRetention in ms.
-- Only if the lock still holds the token, passes it on (handOn: to the
-- head of the line, or deletes it) and replies 1; replies 0 when the lock
-- was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5])
return 1

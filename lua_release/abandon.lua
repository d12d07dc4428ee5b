
-- abandon: KEYS as release.lua; ARGV[1] the waiter's line member, ARGV[2]
-- the waiter's name, ARGV[3] the release-notice channel, ARGV[4]
-- LineStale and ARGV[5] HandOffRecent in ms.
-- Takes a waiter that gave up out of the line and, when a release handed
-- it the lock in the meantime, passes the lock on (handOn). Replies 1 when
-- it passed a lock on, else 0.
redis.call("ZREM", KEYS[3], ARGV[1])
redis.call("ZREM", KEYS[4], ARGV[1])
if redis.call("GET", KEYS[1]) ~= ARGV[2] then
	return 0
end
handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
return 1

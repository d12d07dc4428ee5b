-- acquire: KEYS[1] is the lock, KEYS[2] its fencing counter; ARGV[1] the
-- owner's token, ARGV[2] the TTL in milliseconds.
-- Replies {1, fence} when the lock was free: it is now set with the TTL and
-- the counter, which never expires, has been incremented to fence.
-- Replies {0, pttl} when someone holds it: pttl is what its lock has left.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return {1, redis.call("INCR", KEYS[2])}
end
return {0, redis.call("PTTL", KEYS[1])}

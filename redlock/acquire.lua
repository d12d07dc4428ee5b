-- acquire: one node's vote in a Redlock round.
-- KEYS[1] the lock, KEYS[2] its fencing counter (never expires).
-- ARGV[1] the owner's token, ARGV[2] the TTL in ms, ARGV[3] the name of
-- the Lock call (its tokens are that name, or that name and "." and a
-- number).
-- Replies {1, counter} when the lock is now ours on this node: it is set
-- with the TTL and the counter has been incremented to counter, in the same
-- step. Otherwise replies {0, pttl} when someone else holds it, and
-- {2, pttl} when it holds a token of our own Lock call (left by an earlier
-- attempt, whose release is on its way): pttl is what that lock has
-- left in ms (-1: it has no expiry).
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return {1, redis.call("INCR", KEYS[2])}
end
local pttl = redis.call("PTTL", KEYS[1])
local v = redis.call("GET", KEYS[1])
if v == ARGV[3] or (v and string.sub(v, 1, #ARGV[3] + 1) == ARGV[3] .. ".") then
	return {2, pttl}
end
return {0, pttl}

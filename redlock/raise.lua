-- raise: the fencing write-back of a Redlock acquire on one node.
-- KEYS[1] the lock, KEYS[2] its fencing counter (never expires).
-- ARGV[1] the owner's token, ARGV[2] the fencing token F (a decimal
-- integer, no sign, no leading zeros).
-- While the lock still holds the token, sets the counter to max(counter, F)
-- and replies 1; replies 0, changing nothing, when the lock is missing or
-- someone else's. Integers are compared as strings so that no precision is
-- lost above 2^53.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local cur, f = redis.call("GET", KEYS[2]) or "0", ARGV[2]
if string.sub(cur, 1, 1) == "-" or #cur < #f or (#cur == #f and cur < f) then
	redis.call("SET", KEYS[2], f)
end
return 1

-- guard: KEYS[1] is the resource (a hash with fields "token" and "value"),
-- ARGV[1] the writer's fencing token, ARGV[2] the value. Stores the value
-- and replies 1 when the token is at least the highest seen; replies 0 and
-- changes nothing otherwise.
local highest = tonumber(redis.call("HGET", KEYS[1], "token") or "0")
local token = tonumber(ARGV[1])
if token < highest then
	return 0
end
redis.call("HSET", KEYS[1], "token", ARGV[1], "value", ARGV[2])
return 1

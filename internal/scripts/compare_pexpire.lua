-- compare_pexpire: set KEYS[1]'s time to live to ARGV[2] milliseconds only
-- if it still holds ARGV[1] (the owner's token). Returns 1 when extended, 0
-- when the key is missing or someone else's.
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0

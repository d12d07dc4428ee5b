-- compare_delete: delete KEYS[1] only if it still holds ARGV[1] (the owner's
-- token). Returns 1 when deleted, 0 when the key is missing or someone
-- else's.
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0

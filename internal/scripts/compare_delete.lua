-- compare_delete: delete KEYS[1] only if it still holds ARGV[1] (the owner's
-- token), and then, when ARGV[2] names a channel, publish an empty release
-- notice there in the same step. Returns 1 when deleted, 0 when the key is
-- missing or someone else's.
if redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	if ARGV[2] then
		redis.call("PUBLISH", ARGV[2], "")
	end
	return 1
end
return 0

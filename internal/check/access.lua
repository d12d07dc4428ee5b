-- access: tries, under the caller's ACL, the commands lua_release's and
-- redlock's scripts run, on keys like theirs, and returns the refused ones
-- as "COMMAND: error". KEYS[1] a lock (string), KEYS[2] a line (sorted
-- set), KEYS[3] a fence (counter), all in one slot under the prefix;
-- ARGV[1] a channel under the prefix. Every key it makes expires within
-- 10 s and is deleted before it returns; the script is atomic, so nobody
-- sees them.
local refused = {}
local function try(name, ...)
	local r = redis.pcall(...)
	if type(r) == "table" and r.err then
		refused[#refused + 1] = name .. ": " .. r.err
		return false
	end
	return true
end

try("TIME", "TIME")
if try("SET", "SET", KEYS[1], "1", "NX", "PX", 10000) then
	try("GET", "GET", KEYS[1])
	try("PTTL", "PTTL", KEYS[1])
	try("EXISTS", "EXISTS", KEYS[1])
	-- The other keys are made only when they can be given an expiry.
	if try("PEXPIRE", "PEXPIRE", KEYS[1], 10000) then
		if try("ZADD", "ZADD", KEYS[2], "NX", 1, "m") then
			redis.pcall("PEXPIRE", KEYS[2], 10000)
			try("ZSCORE", "ZSCORE", KEYS[2], "m")
			try("ZRANGE", "ZRANGE", KEYS[2], 0, 0)
			try("ZRANGEBYSCORE", "ZRANGEBYSCORE", KEYS[2], 0, 1)
			try("ZREM", "ZREM", KEYS[2], "m")
		end
		if try("INCR", "INCR", KEYS[3]) then
			redis.pcall("PEXPIRE", KEYS[3], 10000)
			try("DECR", "DECR", KEYS[3])
		end
	end
	try("DEL", "DEL", KEYS[1], KEYS[2], KEYS[3])
end
try("PUBLISH", "PUBLISH", ARGV[1], "lockcompare check")
return refused

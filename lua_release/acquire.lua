
-- acquire: take the lock, serving waiters in the order they arrived.
-- KEYS[1] the lock, KEYS[2] its fencing counter, KEYS[3] the line (a sorted
-- set: member -> arrival time in µs), KEYS[4] the waiters' last-seen times
-- (a sorted set: member -> ms).
-- ARGV[1] the owner's token; ARGV[2] the TTL in ms; ARGV[3] "1" when the
-- caller waits in line (Lock), "0" when it does not (TryLock); ARGV[4] how
-- long, in ms, a waiter may go unseen before it is dropped from the line;
-- ARGV[5] the waiter's name (the same for every attempt of one Lock call);
-- ARGV[6] the name of its Locker.
-- A waiter's line member is "<ttl ms>/<locker>/<name>", so that a release
-- that hands it the lock knows the TTL to set and where to send the notice
-- (see handoff.lua).
-- Replies {1, fence} when the lock is ours: it is set with the TTL and the
-- never-expiring counter has been incremented to fence. Replies {2, fence,
-- pttl} when a release already handed the lock to this waiter: the lock
-- holds the waiter's name and has pttl ms left. Replies {0, pttl}
-- otherwise: pttl is what the holder's lock has left (-2: the lock is free
-- but reserved for the waiter at the head of the line).
local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, waits, stale, me = ARGV[1], ARGV[2], ARGV[3] == "1", tonumber(ARGV[4]), ARGV[5]
local member = ttl .. "/" .. ARGV[6] .. "/" .. me

local function take()
	if redis.call("SET", lock, token, "NX", "PX", ttl) then
		redis.call("ZREM", line, member)
		redis.call("ZREM", seen, member)
		return {1, redis.call("INCR", fence)}
	end
	return nil
end

-- Nobody waits: the plain SET NX PX (the uncontended path).
if redis.call("EXISTS", line) == 0 then
	if redis.call("SET", lock, token, "NX", "PX", ttl) then
		return {1, redis.call("INCR", fence)}
	end
	if not waits then
		return {0, redis.call("PTTL", lock)}
	end
end

-- Handed to us by a release whose notice this attempt overtook.
if waits and redis.call("GET", lock) == me then
	return {2, tonumber(redis.call("GET", fence)) or 0, redis.call("PTTL", lock)}
end

local t = redis.call("TIME")
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)

dropStale(line, seen, nowMs, stale) -- see handoff.lua

local head = redis.call("ZRANGE", line, 0, 0)[1]
if head == nil or head == member then
	local won = take()
	if won then
		return won
	end
end
if waits then
	redis.call("ZADD", line, "NX", nowUs, member)
	redis.call("ZADD", seen, nowMs, member)
	redis.call("PEXPIRE", line, stale * 4)
	redis.call("PEXPIRE", seen, stale * 4)
end
return {0, redis.call("PTTL", lock)}

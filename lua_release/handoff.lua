-- handoff: the functions shared by acquire.lua, release.lua and
-- abandon.lua, which start with this file.
--
-- dropStale takes the waiters unseen for `stale` ms (they gave up or
-- died) out of the line.
local function dropStale(line, seen, nowMs, stale)
	local gone = redis.call("ZRANGEBYSCORE", seen, "-inf", nowMs - stale)
	if #gone > 0 then
		redis.call("ZREM", line, unpack(gone))
		redis.call("ZREM", seen, unpack(gone))
	end
end

-- handOn passes the lock on once its owner is done with it: when the
-- head of the line made an attempt within the last `recent` ms, the lock
-- is set to that waiter's name with the waiter's TTL, the fencing counter
-- is incremented, the waiter leaves the line and a "grant:<fence>:<waiter>"
-- notice tells it that it holds the lock. Otherwise the lock is deleted
-- and, when anyone waits, a "head:<waiter>" notice tells the head to try.
-- Line members are "<ttl ms>/<locker>/<waiter>"; a notice goes to the
-- waiter's Locker only, on channel .. "/" .. locker. Waiters unseen for
-- `stale` ms are dropped first.
local function handOn(lock, fence, line, seen, channel, stale, recent)
	if redis.call("EXISTS", line) == 0 then -- nobody waits: the plain delete
		redis.call("DEL", lock)
		return
	end
	local t = redis.call("TIME")
	local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	dropStale(line, seen, nowMs, stale)
	local head = redis.call("ZRANGE", line, 0, 0)[1]
	if not head then
		redis.call("DEL", lock)
		return
	end
	local ttl, locker, waiter = string.match(head, "^(%d+)/([^/]*)/(.+)$")
	if not ttl then -- not ours: drop it
		redis.call("ZREM", line, head)
		redis.call("ZREM", seen, head)
		redis.call("DEL", lock)
		return
	end
	local inbox = channel .. "/" .. locker
	local last = tonumber(redis.call("ZSCORE", seen, head))
	if last and last >= nowMs - recent then
		redis.call("SET", lock, waiter, "PX", ttl)
		local f = redis.call("INCR", fence)
		redis.call("ZREM", line, head)
		redis.call("ZREM", seen, head)
		redis.call("PUBLISH", inbox, "grant:" .. f .. ":" .. waiter)
		return
	end
	redis.call("DEL", lock)
	redis.call("PUBLISH", inbox, "head:" .. waiter)
end

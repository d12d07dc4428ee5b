-- handoff: lua_release's hand-off, shared by release.lua and abandon.lua,
-- which start with the prelude (package protocol) and this file.
--
-- handOn passes the lock on once its owner is done with it: when the head
-- of the line is alive, the lock is set to that waiter's name with the
-- waiter's TTL, the waiter gets the next fencing token and leaves the
-- line, and a hand-off notice tells it that it holds the lock. The head is
-- alive when it made an attempt within the last `recent` ms, or when its
-- Locker listens on its inbox (PUBSUB NUMSUB: at least one subscriber, so
-- its process is up; a waiter that gives up passes a lock handed to it on,
-- abandon.lua) and it was seen within `stale` ms. On Redis Cluster NUMSUB
-- counts the subscribers of this node only, so a head listening on another
-- node counts as not listening. Otherwise the lock is deleted and, when
-- anyone waits, a head notice tells the head to try. Notices go to the waiter's Locker
-- only (inbox). Waiters unseen for `stale` ms are dropped first when the
-- head is one of them (liveHead). The
-- fencing counter is read before anything is written, so a bad counter
-- fails the script with nothing written (readFence). The callers make the
-- plain delete themselves when nobody waits (EXISTS of the line), before
-- they need handOn.
--
-- handOn writes out the line's walk (liveHead, dropStale, leave) and the
-- encodings (parseMember, inbox, handOffNotice, headNotice) of the
-- prelude's waitLine groups instead of building them: the 12 functions and
-- 2 tables those two groups make cost 1.4 of the 10 µs of Redis time a
-- hand-off took (pipelined, Redis 7.0). What it writes is what they write:
-- a change to one of them is a change here.
local function handOn(lock, fence, line, seen, channel, stale, recent, retention)
	local F = waitLine("fence")
	local stored = F.readFence(fence)
	local t = redis.call("TIME")
	local nowU = tonumber(t[1]) * 1000000 + tonumber(t[2])
	local now = math.floor(nowU / 1000)
	-- The live head and when it was last seen (the line's liveHead).
	local head, last
	while true do
		head = redis.call("ZRANGE", line, 0, 0)[1]
		if not head then -- nobody live waits
			redis.call("DEL", lock)
			return
		end
		last = tonumber(redis.call("ZSCORE", seen, head))
		if last and last > now - stale then
			break
		end
		local gone = redis.call("ZRANGEBYSCORE", seen, "-inf", now - stale)
		if #gone > 0 then
			redis.call("ZREM", line, unpack(gone))
			redis.call("ZREM", seen, unpack(gone))
		end
		if not last then -- never seen: not a waiter of ours
			redis.call("ZREM", line, head)
		end
	end
	-- "<ttl ms>/<locker>/<waiter>" (parseMember); not ours: drop it.
	local ttl, locker, waiter = string.match(head, "^(%d+)/([^/]*)/(.+)$")
	if not ttl then
		redis.call("ZREM", line, head)
		redis.call("ZREM", seen, head)
		redis.call("DEL", lock)
		return
	end
	local box = channel .. ":" .. locker -- its Locker's inbox
	if last >= now - recent or redis.call("PUBSUB", "NUMSUB", box)[2] > 0 then
		redis.call("SET", lock, waiter, "PX", ttl)
		local f = F.writeFence(fence, stored and stored + 1 or nowU, ttl, retention)
		redis.call("ZREM", line, head)
		redis.call("ZREM", seen, head)
		redis.call("PUBLISH", box, "handoff:" .. string.format("%.0f", f) .. ":" .. waiter)
		return
	end
	redis.call("DEL", lock)
	redis.call("PUBLISH", box, "head:" .. waiter)
end

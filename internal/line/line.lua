-- line: the wait line's Lua, which every script of lua_release and
-- redlock starts with (package line's Source puts it in front), Go's
-- half being package line (handoff.go) and the encodings package
-- protocol's (doc.go: layout and encodings). A hand-off in Redis is
-- release (at the end) and handOn.

-- waitLine returns, built on demand off the scripts' fast paths, one
-- group of functions as a table: every function a script defines costs
-- Redis time on every call, so a script's fast path defines only waitLine,
-- takeFence and release, and a slow path builds the group it needs:
--   waitLine("handoff") the hand-off: handOn, which passes a released
--                       lock on to the live head of the line;
--   waitLine()          the line of waiters: nowUs, nowMs, join, leave,
--                       liveHead, member;
--   waitLine("notice")  the encodings and the head notice: parseMember,
--                       inbox, headNotice, handOffNotice, tellHead;
--   waitLine("fence")   the fencing counter: readFence, nextFence,
--                       writeFence, nowUs.
local function waitLine(group)
	-- nowUs is the server's time in µs.
	local function nowUs()
		local t = redis.call("TIME")
		return tonumber(t[1]) * 1000000 + tonumber(t[2])
	end

	if group == "handoff" then
		-- handOn passes the lock on once its owner released it. A head of
		-- the line that is alive gets it: the lock is set to its name with
		-- its TTL, it gets the next fencing token, leaves the line, and a
		-- "handoff:" notice on its Locker's inbox tells it that it holds the
		-- lock. Alive: seen within `recent` ms, or its Locker listens on its
		-- inbox (PUBSUB NUMSUB; on Redis Cluster only this node's
		-- subscribers count) and it was seen within `listened` ms (liveHead
		-- first drops a head unseen for `stale` ms whose Locker does not
		-- listen, or unseen for `listened` ms). Otherwise the lock is
		-- deleted and a "head:" notice tells the head to try. quiet, when
		-- given, is the member of a waiter of the caller's own Locker
		-- (see release): at the head it is alive and gets the lock
		-- without a notice, as the caller hands it over. The counter is read
		-- before anything is written, so a bad one fails the script with
		-- nothing written. The callers make the plain delete themselves
		-- when nobody waits. Returns the member handed the lock and its
		-- fencing token, or nil when the lock was deleted.
		local function handOn(lock, fence, line, seen, channel, stale, listened, recent, retention, quiet)
			local L, N, F = waitLine(), waitLine("notice"), waitLine("fence")
			local stored = F.readFence(fence)
			local now = L.nowMs()
			local head, last, listening = L.liveHead(line, seen, now, stale, listened, channel)
			if not head then
				redis.call("DEL", lock)
				return
			end
			local ttl, locker, waiter = N.parseMember(head)
			if not ttl then -- not ours: drop it
				L.leave(line, seen, head)
				redis.call("DEL", lock)
				return
			end
			local box = N.inbox(channel, locker)
			if head == quiet or listening or last >= now - recent or redis.call("PUBSUB", "NUMSUB", box)[2] > 0 then
				redis.call("SET", lock, waiter, "PX", ttl)
				local f = F.writeFence(fence, F.nextFence(stored), ttl, retention)
				L.leave(line, seen, head)
				if head ~= quiet then
					redis.call("PUBLISH", box, N.handOffNotice(f, waiter))
				end
				return head, f
			end
			redis.call("DEL", lock)
			redis.call("PUBLISH", box, N.headNotice(waiter))
		end
		return {handOn = handOn}
	elseif group == "notice" then
		-- parseMember reads a line member "<ttl ms>/<locker>/<waiter>"
		-- (protocol.Member); nil for anything else.
		local function parseMember(m)
			return string.match(m, "^(%d+)/([^/]*)/(.+)$")
		end

		-- inbox is the channel of the Locker named locker for a lock whose
		-- channel is channel (protocol.Inbox).
		local function inbox(channel, locker)
			return channel .. ":" .. locker
		end

		-- Notice bodies (protocol.Notice).
		local function headNotice(waiter)
			return "head:" .. waiter
		end

		local function handOffNotice(fence, waiter)
			return "handoff:" .. string.format("%.0f", fence) .. ":" .. waiter
		end

		-- tellHead publishes headNotice to the inbox of the head of the line
		-- (head, when the caller has read it already), unless the head is
		-- except, so that only the waiter whose turn it is hurries. A member
		-- that is not lockzoo's is dropped.
		local function tellHead(line, seen, channel, except, head)
			head = head or redis.call("ZRANGE", line, 0, 0)[1]
			if not head or head == except then
				return
			end
			local _, locker, waiter = parseMember(head)
			if not locker then
				redis.call("ZREM", line, head)
				redis.call("ZREM", seen, head)
				return
			end
			redis.call("PUBLISH", inbox(channel, locker), headNotice(waiter))
		end
		return {parseMember = parseMember, inbox = inbox, headNotice = headNotice, handOffNotice = handOffNotice, tellHead = tellHead}
	elseif group == "fence" then
		-- readFence returns the lock's fencing counter, or nil when there is none.
		-- A counter that is not a decimal integer in [0, 2^53), or a key of
		-- another type, fails the script before it writes anything, naming the key.
		local function readFence(fence)
			local v = redis.pcall("GET", fence)
			if type(v) == "table" and v.err then
				error({err = "ERR lockzoo: fencing counter " .. fence .. ": " .. v.err})
			end
			if not v then
				return nil
			end
			local n = string.match(v, "^%d+$") and #v <= 16 and tonumber(v)
			if not n or n >= 9007199254740992 then
				error({err = "ERR lockzoo: fencing counter " .. fence .. " holds " .. string.sub(v, 1, 40) ..
					", not an integer in [0, 2^53)"})
			end
			return n
		end

		-- nextFence is the fencing token of a new holder whose counter read
		-- stored (readFence): stored + 1, or the server's clock in µs when there
		-- is no counter.
		local function nextFence(stored)
			if stored then
				return stored + 1
			end
			return nowUs()
		end

		-- writeFence stores the fencing token f, to expire retention ms after
		-- the lock's ttl ms, and returns f.
		local function writeFence(fence, f, ttl, retention)
			redis.call("SET", fence, string.format("%.0f", f), "PX", tonumber(ttl) + tonumber(retention))
			return f
		end
		return {readFence = readFence, nextFence = nextFence, writeFence = writeFence, nowUs = nowUs}
	end

	-- nowMs is the server's time in ms.
	local function nowMs()
		return math.floor(nowUs() / 1000)
	end

	-- join puts member in the line with order (once: a waiter's order never
	-- changes) and marks it seen at now. The line's keys expire at least
	-- life*3 ms after the last join or attempt of any waiter: one that
	-- finds less left, or no expiry, sets life*4 again, so there is at
	-- most one pair of PEXPIREs per life ms however many join, while every
	-- live waiter attempts at least every life/2 (life is the longest a
	-- waiter keeps its place unseen, LISTENED); a line that outlives its
	-- waiters is garbage. The check is one PTTL, where a pair of PEXPIREs
	-- on every new member would be two: under contention every Lock call
	-- joins as a new member (redlock's crowd of 8 spent 10 PEXPIREs per
	-- critical section so).
	local function join(line, seen, order, member, now, life)
		redis.call("ZADD", seen, now, member)
		redis.call("ZADD", line, "NX", order, member)
		if redis.call("PTTL", line) < life * 3 then -- -1: none yet
			redis.call("PEXPIRE", line, life * 4)
			redis.call("PEXPIRE", seen, life * 4)
		end
	end

	-- liveHead returns the head of the line, when it was last seen,
	-- whether its Locker was found listening, and its order in the line,
	-- or nil when nobody live waits. A head seen within `stale` ms is
	-- live, and so is one seen within `listened` ms whose Locker listens
	-- on its inbox (PUBSUB NUMSUB of the lock's notice channel `channel`
	-- and its Locker: a subscriber on this node; the third reply is then
	-- true). Any other head is dropped, alone: the waiters behind it may
	-- be listening ones, each checked when it reaches the head. A head
	-- seen within stale costs one ZRANGE and one ZSCORE.
	local function liveHead(line, seen, now, stale, listened, channel)
		while true do
			local first = redis.call("ZRANGE", line, 0, 0, "WITHSCORES")
			local head = first[1]
			if not head then
				return nil
			end
			local last = tonumber(redis.call("ZSCORE", seen, head))
			if last and last > now - stale then
				return head, last, false, tonumber(first[2])
			end
			-- the Locker's name in the member (parseMember's format)
			local locker = last and last > now - listened and string.match(head, "^%d+/([^/]*)/.+$")
			if locker and redis.call("PUBSUB", "NUMSUB", channel .. ":" .. locker)[2] > 0 then
				return head, last, true, tonumber(first[2])
			end
			redis.call("ZREM", line, head)
			redis.call("ZREM", seen, head)
		end
	end

	-- leave takes member out of the line.
	local function leave(line, seen, member)
		redis.call("ZREM", line, member)
		redis.call("ZREM", seen, member)
	end

	-- member is the line member of the waiter named waiter, of the Locker
	-- named locker, asking for a TTL of ttl ms: "<ttl>/<locker>/<waiter>"
	-- (protocol.Member; parseMember reads it back).
	local function member(ttl, locker, waiter)
		return ttl .. "/" .. locker .. "/" .. waiter
	end
	return {nowUs = nowUs, nowMs = nowMs, join = join, leave = leave, liveHead = liveHead, member = member}
end

-- takeFence gives the holder that has just SET lock its fencing token, on
-- the fast path: INCR of the counter, or, when there was none (INCR made
-- it 1), the server's clock in µs, stored to expire retention ms after
-- the lock's ttl. An INCR keeps the counter's expiry, so a counter expires
-- at most TTL + retention after it was made, and the next holder starts
-- again from the clock. A bad counter (not an integer, one that would
-- wrap, another type) is refused: the lock's SET and the INCR are undone,
-- so nothing is written, and it returns nil and an error naming the key.
-- incr, when given, is the reply of a redis.pcall("INCR", fence) the
-- script made already (a fast path that replies a plain next token
-- itself), and takeFence makes no INCR of its own.
local function takeFence(lock, fence, ttl, retention, incr)
	local f = incr or redis.pcall("INCR", fence)
	if type(f) == "table" then
		redis.call("DEL", lock)
		return nil, "ERR lockzoo: fencing counter " .. fence .. ": " .. tostring(f.err)
	end
	if f < 1 or f >= 9007199254740992 then
		redis.call("DECR", fence)
		redis.call("DEL", lock)
		return nil, "ERR lockzoo: fencing counter " .. fence .. " holds " .. string.format("%.0f", f - 1) ..
			", not an integer in [0, 2^53)"
	end
	if f == 1 then
		local F = waitLine("fence")
		return F.writeFence(fence, F.nowUs(), ttl, retention)
	end
	return f
end

-- release is the owner-checked release of a technique that keeps a line
-- of waiters (package line's release.lua; redlock's release.lua): keys
-- the lock's four keys (protocol.Keys), token the owner's token. Only if
-- the lock holds token: with nobody waiting, the plain delete (GET,
-- EXISTS, DEL: the uncontended path); else handOn, to the live head of
-- the line, or deleted. quiet, when given, is the line member of a
-- waiter of the caller's own Locker (a local Unlock's hand-off): at the
-- head, it gets the lock without a notice and the reply is {fence}, as
-- the caller hands it over; a lost reply leaves nobody's lock, since a
-- waiter that gives up passes on a lock handed to it (abandon.lua).
-- Replies 0 when the lock was missing or someone else's, else 1.
local function release(keys, token, quiet, stale, listened, recent, retention)
	if redis.call("GET", keys[1]) ~= token then
		return 0
	end
	if redis.call("EXISTS", keys[3]) == 0 then
		redis.call("DEL", keys[1])
		return 1
	end
	local head, f = waitLine("handoff").handOn(keys[1], keys[2], keys[3], keys[4], keys[1] .. ":notice",
		stale, listened, recent, retention, quiet)
	if quiet and head == quiet then
		return {f}
	end
	return 1
end

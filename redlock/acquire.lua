-- acquire: one node's vote in a Redlock round, serving waiters in the
-- order of their tickets. The line's Lua (line.Source) and the constants
-- STALE, LISTENED and RETENTION (ms, see useRetention) come in front.
-- KEYS the lock, its fencing counter, its line and the waiters' last-seen
-- times (protocol.Keys). ARGV the token, the TTL in ms, the Lock call's
-- name, "1" when it waits in line, its ticket (µs of its client's clock),
-- its Locker's name, and optionally the token of a lock to release first
-- (a hand-off, or a release of ours still on its way here).
-- Replies (docs/redlock.md, "What each request carries"): the fencing
-- counter alone when the lock is now ours and nothing was released first;
-- else {1, counter, released} when ours, {0, pttl, released} when someone
-- else holds it (pttl -2: free but kept for an earlier ticket), adding
-- listened and the fencing counter (-1: none) for a caller that waits in
-- line, and {2, pttl, released} when it holds a token of this Lock call
-- that it does not take over. An earlier attempt's token of the same call,
-- or the call's name (a release handed it the lock, handOn), is taken over.
local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, prev = ARGV[1], ARGV[2], ARGV[7]

-- The lock to release first, if any: deleted while it still holds prev.
local released = 0
if prev and redis.call("GET", lock) == prev then
	redis.call("DEL", lock)
	released = 1
end

-- The uncontended path, first and with nothing else defined (every
-- function a script defines costs Redis time on every call): nobody
-- waits and the lock is free.
local nobody = redis.call("EXISTS", line) == 0
if nobody and redis.call("SET", lock, token, "NX", "PX", ttl) then
	local f, err = takeFence(lock, fence, ttl, RETENTION)
	if not f then
		return redis.error_reply(err)
	end
	if released == 0 then
		return f
	end
	return {1, f, 1}
end

local me, waits, ticket, locker = ARGV[3], ARGV[4] == "1", tonumber(ARGV[5]), ARGV[6]

-- reply adds released to a reply, and announces a lock this step released
-- but did not take to the head of the line. A refusal of a caller that
-- waits in line also says whether its Locker listens on its inbox on this
-- node (PUBSUB NUMSUB): 1 when it does, so that the line keeps its place
-- for LISTENED ms between its attempts (liveHead), else 0 (STALE ms).
local function reply(status, n)
	if released == 1 and status ~= 1 then
		waitLine("notice").tellHead(line, seen, lock .. ":notice")
	end
	if status == 0 and waits then
		local listened = redis.call("PUBSUB", "NUMSUB", lock .. ":notice:" .. locker)[2] > 0 and 1 or 0
		local c = redis.pcall("GET", fence)
		return {status, n, released, listened, type(c) == "string" and tonumber(c) or -1}
	end
	return {status, n, released}
end

local function take()
	if redis.call("SET", lock, token, "NX", "PX", ttl) then
		local f, err = takeFence(lock, fence, ttl, RETENTION)
		if not f then
			return redis.error_reply(err)
		end
		return reply(1, f)
	end
	return nil
end

-- handed takes the lock a release handed to this Lock call (handOn set
-- it to the call's name and took the waiter out of the line) under this
-- attempt's token, with a fresh TTL and the counter the hand-off set (a
-- new one from the clock, should it be gone). The counter is read first,
-- so that a bad one fails the script before it writes anything.
local function handed()
	local F = waitLine("fence")
	local f = F.readFence(fence)
	redis.call("SET", lock, token, "PX", ttl)
	return reply(1, f or F.writeFence(fence, F.nowUs(), ttl, RETENTION))
end

local function ours(v)
	return v == me or string.sub(v, 1, #me + 1) == me .. "."
end

-- attempt returns the attempt number of a token of this Lock call (the
-- call's name, "." and digits), or nil for any other value (a hand-off's
-- token, <name>.p<n>, someone else's, or none).
local function attempt(v)
	if not v or string.sub(v, 1, #me + 1) ~= me .. "." then
		return nil
	end
	local n = string.sub(v, #me + 2)
	if not string.match(n, "^%d+$") then
		return nil
	end
	return tonumber(n)
end

-- An earlier attempt of this Lock call (a token with a smaller attempt
-- number) whose outcome the client never learnt (its reply was lost) and
-- whose release has not come (a node the client skips as suspect gets
-- none): this attempt takes its place. Its release, if it comes, finds
-- another token. Only an earlier one: a Lock call makes its attempts one
-- at a time, so an earlier attempt has failed, but a request of one that
-- reaches the node late finds a later attempt's lock, which may be the
-- call's lease. A hand-off's token (<name>.p<n>) neither takes over nor
-- is taken over: Unlock makes it while the waiter may be attempting too.
local function earlier(v)
	local n = v and v ~= token and attempt(v)
	if not n then
		return false
	end
	local mine = attempt(token)
	return mine ~= nil and n < mine
end

-- Nobody waits: the plain SET NX PX was tried above, and the lock is held.
if nobody then
	local v = redis.call("GET", lock)
	if waits and v == me then
		return handed()
	end
	if earlier(v) then
		redis.call("DEL", lock)
		local won = take()
		if won then
			return won
		end
	end
	if ours(v) then
		return reply(2, redis.call("PTTL", lock))
	end
	if waits then
		local L = waitLine()
		L.join(line, seen, ticket, L.member(ttl, locker, me), L.nowMs(), LISTENED)
	end
	return reply(0, redis.call("PTTL", lock))
end

local v = redis.call("GET", lock)
if waits and v == me then
	return handed()
elseif earlier(v) then
	redis.call("DEL", lock)
	v = nil
elseif v and ours(v) then
	return reply(2, redis.call("PTTL", lock))
end
local L = waitLine()
local member = L.member(ttl, locker, me)
local now = L.nowMs()
-- A free lock goes to the earliest ticket among the live waiters and us
-- (liveHead drops the dead heads first); a held one to nobody, so the
-- line is not read for it (the release that frees it reads it).
if not v then
	local head, _, _, order = L.liveHead(line, seen, now, STALE, LISTENED, lock .. ":notice")
	if head == nil or head == member or ticket < order or (ticket == order and member < head) then
		local won = take()
		if not (won and won.err) then
			L.leave(line, seen, member)
		end
		return won
	end
end
if waits then
	L.join(line, seen, ticket, member, now, LISTENED)
end
if v then
	return reply(0, redis.call("PTTL", lock))
end
return reply(0, -2)

-- acquire: one node's vote in a Redlock round, serving waiters in the
-- order of their tickets. It starts with the prelude (package protocol).
-- KEYS the lock, its fencing counter, its line (member -> ticket) and the
-- waiters' last-seen times (member -> ms) (protocol.Keys).
-- ARGV[1] the owner's token, ARGV[2] the TTL in ms, ARGV[3] the name of
-- the Lock call (its tokens are that name, or that name and "." and a
-- number), ARGV[4] "1" when the caller waits in line (Lock), "0" when it
-- does not (TryLock), ARGV[5] the call's ticket (when it began, in µs of
-- the client's clock: the same on every node, so every node orders the
-- line alike), ARGV[6] protocol.Stale in ms, ARGV[7] the waiter's line
-- member (protocol.Member), ARGV[8] the token of a lock to release first,
-- or "" (a hand-off: Unlock passing its lock to a waiter of the same
-- Locker), ARGV[9] the lock's notice channel (protocol.Channel), ARGV[10]
-- protocol.FenceRetention in ms.
-- Replies {1, counter, released} when the lock is now ours on this node:
-- it is set with the TTL and counter is this node's next fencing token,
-- stored in the same step (see package protocol). Otherwise replies {0,
-- pttl, released} when someone else holds it (-2: it is free but kept for
-- a waiter with an earlier ticket), and {2, pttl, released} when it holds
-- a token of this Lock call that it does not take over: this very token
-- (left by this attempt's own undo racing it), a later attempt's (this
-- request came late) or a hand-off's; pttl is what that lock has left in
-- ms (-1: it has no expiry). A lock that holds an earlier attempt's token
-- of the same Lock call is taken over (earlier). released is 1 when the
-- lock held ARGV[8] and was deleted first, else 0; a lock released so and
-- not taken is announced as release.lua does. A bad counter is refused
-- with an error naming it (takeFence); the lock's SET is undone, but a
-- lock released first (ARGV[8]) stays released.
local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, prev, retention = ARGV[1], ARGV[2], ARGV[8], ARGV[10]

-- The uncontended path, first and with nothing else defined (every
-- function a script defines costs Redis time on every call): nobody
-- waits, nothing is to be released first, and the lock is free.
local nobody = redis.call("EXISTS", line) == 0
if nobody and prev == "" and redis.call("SET", lock, token, "NX", "PX", ttl) then
	local f, err = takeFence(lock, fence, ttl, retention)
	if not f then
		return redis.error_reply(err)
	end
	return {1, f, 0}
end

local me, waits = ARGV[3], ARGV[4] == "1"
local ticket, stale, member = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local channel = ARGV[9]

local released = 0
if prev ~= "" and redis.call("GET", lock) == prev then
	redis.call("DEL", lock)
	released = 1
end

-- reply adds released to a reply, and announces a lock this step released
-- but did not take to the head of the line.
local function reply(status, n)
	if released == 1 and status ~= 1 then
		waitLine("notice").tellHead(line, seen, channel)
	end
	return {status, n, released}
end

local function take()
	if redis.call("SET", lock, token, "NX", "PX", ttl) then
		local f, err = takeFence(lock, fence, ttl, retention)
		if not f then
			return redis.error_reply(err)
		end
		return reply(1, f)
	end
	return nil
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

-- Nobody waits: the plain SET NX PX (tried above unless a lock was to be
-- released first).
if nobody then
	local won = prev ~= "" and take()
	if won then
		return won
	end
	local v = redis.call("GET", lock)
	if earlier(v) then
		redis.call("DEL", lock)
		won = take()
		if won then
			return won
		end
	end
	if ours(v) then
		return reply(2, redis.call("PTTL", lock))
	end
	if waits then
		local L = waitLine()
		L.join(line, seen, ticket, member, L.nowMs(), stale)
	end
	return reply(0, redis.call("PTTL", lock))
end

local v = redis.call("GET", lock)
if earlier(v) then
	redis.call("DEL", lock)
	v = nil
elseif v and ours(v) then
	return reply(2, redis.call("PTTL", lock))
end
local L = waitLine()
local now = L.nowMs()
L.dropStale(line, seen, now, stale)
-- The lock goes to the earliest ticket among the waiters and us.
local head = redis.call("ZRANGE", line, 0, 0, "WITHSCORES")
local first = head[1] == nil or head[1] == member or ticket < tonumber(head[2])
	or (ticket == tonumber(head[2]) and member < head[1])
if first and not v then
	local won = take()
	if not (won and won.err) then
		L.leave(line, seen, member)
	end
	return won
end
if waits then
	L.join(line, seen, ticket, member, now, stale)
end
if v then
	return reply(0, redis.call("PTTL", lock))
end
return reply(0, -2)

-- acquire: take the lock, serving waiters in the order they arrived.
-- KEYS the lock, its fencing counter, its line (member -> arrival in µs)
-- and the waiters' last-seen times (member -> ms) (protocol.Keys).
-- ARGV[1] the owner's token; ARGV[2] the TTL in ms. A caller that waits
-- in line (Lock) sends ARGV[3] the name of its Locker and, only when the
-- waiter's name (the same for every attempt of one Lock call) is not the
-- token's part before its last "." (the engine's tokens are "<waiter>.<n>"),
-- ARGV[4] that name; a TryLock sends no ARGV[3] and joins no line. The
-- waiter's line member (protocol.Member, built by the line's member) holds
-- the TTL, the Locker and the name, so that a release that hands it the
-- lock knows the TTL to set and where to send the notice (see package line's line.lua, handOn).
-- STALE (protocol.Stale), LISTENED (protocol.Listened) and RETENTION
-- (protocol.FenceRetention), in ms, and REPLICATED (the Locker waits for
-- its replicas), are set in front of this script (package luarelease): a
-- constant costs no argument to send and parse.
-- Replies the new fencing token (see package protocol) when the lock is
-- ours: it is set with the TTL. Replies {2, fence, pttl} when a release
-- already handed the lock to this waiter: the lock holds the waiter's name
-- and has pttl ms left. Replies {0, pttl} to a refused TryLock and {0,
-- pttl, listened, counter} to a refused Lock: pttl is what the holder's lock has
-- left (-2: the lock is free but reserved for the waiter at the head of
-- the line), listened is 1 when the waiter's Locker listens on its inbox
-- on this node (PUBSUB NUMSUB), so that the line keeps the waiter's place
-- for LISTENED ms between its attempts (liveHead), else 0 (STALE ms);
-- counter is the lock's fencing counter as the refusal found it (-1: none,
-- or not a number), so that a hand-off whose fencing token is above it is
-- known to have come after this refusal.
-- A bad counter is refused with an error naming it, and nothing written
-- (takeFence).

-- Nobody waits: the plain SET NX PX and the counter's INCR (the
-- uncontended path: EXISTS, SET, INCR and nothing else, no local but
-- incr, no function called but type, since every step costs Redis time on
-- every call). A counter's next token is replied at once; incr keeps any
-- other INCR reply (a new counter, a bad one) for takeFence below, with
-- the lock already set.
local incr
if redis.call("EXISTS", KEYS[3]) == 0 then
	if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
		incr = redis.pcall("INCR", KEYS[2])
		if type(incr) == "number" and incr > 1 and incr < 9007199254740992 then
			return incr
		end
	elseif not ARGV[3] then -- a TryLock: held
		return {0, redis.call("PTTL", KEYS[1])}
	end
end

local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl = ARGV[1], ARGV[2]
if incr then
	local f, err = takeFence(lock, fence, ttl, RETENTION, incr)
	if not f then
		return redis.error_reply(err)
	end
	return f
end

-- The waiter's name and line member; nil for a TryLock.
local me, member
if ARGV[3] then
	me = ARGV[4] or string.match(token, "^(.*)%.")
end

-- Handed to us by a release whose notice this attempt overtook (or whose
-- notice a Locker that waits for its replicas does not take as it is).
-- REPLICATED (set in front, package luarelease): the lock's expiry is
-- written again as it is, a write of this connection's own, so that the
-- WAIT that follows on it covers the release that handed the lock over
-- (WAIT counts the acknowledgements of the connection's last write).
local holder = redis.call("GET", lock)
if me and holder == me then
	local pttl = redis.call("PTTL", lock)
	if REPLICATED and pttl > 0 then
		redis.call("PEXPIRE", lock, pttl)
	end
	return {2, waitLine("fence").readFence(fence) or 0, pttl}
end

local L = waitLine()
if me then
	member = L.member(ttl, ARGV[3], me)
end
local nowU = L.nowUs()
local now = math.floor(nowU / 1000)

-- A free lock is ours when nobody live waits before us (liveHead drops
-- the stale waiters first); a held one is not, and the line is left as
-- it is.
if not holder then
	local head = L.liveHead(line, seen, now, STALE, LISTENED, lock .. ":notice")
	if head == nil or head == member then
		if redis.call("SET", lock, token, "NX", "PX", ttl) then
			local f, err = takeFence(lock, fence, ttl, RETENTION)
			if not f then
				return redis.error_reply(err)
			end
			if member then
				L.leave(line, seen, member)
			end
			return f
		end
	end
end
if not member then
	return {0, redis.call("PTTL", lock)}
end
L.join(line, seen, nowU, member, now, LISTENED)
local listened = redis.call("PUBSUB", "NUMSUB", lock .. ":notice:" .. ARGV[3])[2] > 0 and 1 or 0
return {0, redis.call("PTTL", lock), listened, tonumber(redis.call("GET", fence)) or -1}

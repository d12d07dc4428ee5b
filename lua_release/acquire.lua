-- acquire: take the lock, serving waiters in the order they arrived.
-- KEYS the lock, its fencing counter, its line (member -> arrival in µs)
-- and the waiters' last-seen times (member -> ms) (protocol.Keys).
-- ARGV[1] the owner's token; ARGV[2] the TTL in ms; ARGV[3] "1" when the
-- caller waits in line (Lock), "0" when it does not (TryLock); ARGV[4] the
-- waiter's name (the same for every attempt of one Lock call); ARGV[5] the
-- name of its Locker. The waiter's line member (protocol.Member, built by
-- the line's member) holds the TTL, the Locker and the name, so that a
-- release that hands it the lock knows the TTL to set and where to send
-- the notice (see handoff.lua). STALE (protocol.Stale) and RETENTION
-- (protocol.FenceRetention), in ms, are set in front of this script
-- (package luarelease): a constant costs no argument to send and parse.
-- Replies the new fencing token (see package protocol) when the lock is
-- ours: it is set with the TTL. Replies {2, fence, pttl} when a release
-- already handed the lock to this waiter: the lock holds the waiter's name
-- and has pttl ms left. Replies {0, pttl} otherwise: pttl is what the
-- holder's lock has left (-2: the lock is free but reserved for the waiter
-- at the head of the line).
-- A bad counter is refused with an error naming it, and nothing written
-- (takeFence).
local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local token, ttl, waits = ARGV[1], ARGV[2], ARGV[3] == "1"
local me = ARGV[4]

local function take()
	if redis.call("SET", lock, token, "NX", "PX", ttl) then
		local f, err = takeFence(lock, fence, ttl, RETENTION)
		if not f then
			return redis.error_reply(err)
		end
		return f
	end
	return nil
end

-- Nobody waits: the plain SET NX PX (the uncontended path).
if redis.call("EXISTS", line) == 0 then
	local won = take()
	if won then
		return won
	end
	if not waits then
		return {0, redis.call("PTTL", lock)}
	end
end

-- Handed to us by a release whose notice this attempt overtook.
local holder = redis.call("GET", lock)
if waits and holder == me then
	return {2, waitLine("fence").readFence(fence) or 0, redis.call("PTTL", lock)}
end

local L = waitLine()
local member = L.member(ttl, ARGV[5], me)
local nowU = L.nowUs()
local now = math.floor(nowU / 1000)

-- A free lock is ours when nobody live waits before us (liveHead drops
-- the stale waiters first); a held one is not, and the line is left as
-- it is.
if not holder then
	local head = L.liveHead(line, seen, now, STALE)
	if head == nil or head == member then
		local won = take()
		if won then
			if type(won) == "number" then
				L.leave(line, seen, member)
			end
			return won
		end
	end
end
if waits then
	L.join(line, seen, nowU, member, now, STALE, true)
end
return {0, redis.call("PTTL", lock)}

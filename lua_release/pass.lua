-- pass: an Unlock that hands the lock to a waiter of the same Locker
-- (engine.HandOffer), in the one step of the release. It starts with the
-- prelude (package protocol) and handoff.lua. KEYS as release.lua; ARGV[1]
-- the holder's token, ARGV[2] the waiter's name, ARGV[3] its TTL in ms
-- and ARGV[4] its line member (protocol.Member).
-- STALE, LISTENED, RECENT and RETENTION are set in front, as for
-- release.lua.
-- Replies 0 when the lock did not hold ARGV[1]: nothing is written.
-- Otherwise the lock is released as release.lua releases it, except that
-- the waiter is served at once when its turn has come, with the lock set
-- to its name and its TTL, as a release hands a lock to the head of the
-- line (so that the waiter's own attempt finds it its own, acquire.lua),
-- and its new fencing token replied, {fence}: when nobody (live) waits in
-- the line, or when the waiter is its head (handed as to any head, but
-- without a notice: the caller hands it over). Replies 1 when the lock
-- went to another waiter of the line, or was deleted for one that must
-- try first: the caller's waiter tries on its own.
-- A bad counter fails the script: when the lock was already handed on
-- nothing is written (handOn reads the counter first); when it was to be
-- set for the waiter, it is deleted (takeFence), so nobody holds it.
local lock, fence, line, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call("GET", lock) ~= ARGV[1] then
	return 0
end
local name, ttl, member = ARGV[2], ARGV[3], ARGV[4]
if redis.call("EXISTS", line) == 1 then
	local head, f = handOn(lock, fence, line, seen, lock .. ":notice", STALE, LISTENED, RECENT, RETENTION, member)
	if head == member then
		return {f}
	end
	-- Handed to another waiter, or deleted while someone still waits
	-- (a head told to try, a member that is not lockzoo's dropped).
	if head or redis.call("EXISTS", line) == 1 then
		return 1
	end
end
-- Nobody live waits: the lock goes to the waiter, as an uncontended
-- acquire would give it (the lock is ours, or deleted by handOn).
redis.call("SET", lock, name, "PX", ttl)
local f, err = takeFence(lock, fence, ttl, RETENTION)
if not f then
	return redis.error_reply(err)
end
return {f}

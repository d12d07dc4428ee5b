-- pass: an Unlock that hands the lock to a waiter of the same Locker
-- (engine.HandOffer), in the one step of the release. It starts with the
-- prelude (package protocol) and handoff.lua. KEYS as release.lua; ARGV[1]
-- the holder's token, ARGV[2] the waiter's line member (protocol.Member).
-- STALE, LISTENED, RECENT and RETENTION are set in front, as for
-- release.lua.
-- Replies 0 when the lock did not hold ARGV[1]: nothing is written.
-- Otherwise the lock is released as release.lua releases it, except that
-- when the waiter is the head of the line the lock is handed to it as to
-- any head (set to its name with its TTL and the next fencing token, the
-- waiter taken out of the line) but without a notice, and the fencing
-- token is replied, {fence}: the caller hands the lock over. Only a
-- waiter in the line is served so: one that gives up takes itself out
-- of the line, and passes on a lock handed to it, as any waiter does
-- (abandon.lua), so a lost reply leaves nobody's lock behind. Replies 1
-- when the lock went to another waiter, or was deleted (nobody waits in
-- the line, or its head must try first): the caller's waiter tries on
-- its own.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
if redis.call("EXISTS", KEYS[3]) == 0 then -- nobody waits: the plain delete
	redis.call("DEL", KEYS[1])
	return 1
end
local head, f = handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[1] .. ":notice", STALE, LISTENED, RECENT, RETENTION, ARGV[2])
if head == ARGV[2] then
	return {f}
end
return 1

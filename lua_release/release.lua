-- release: KEYS the lock, its fencing counter, its line and the waiters'
-- last-seen times (protocol.Keys); ARGV[1] the owner's token, and, from an
-- Unlock that hands the lock to a waiter of its own Locker (HandOff),
-- ARGV[2] that waiter's line member (protocol.Member). STALE, LISTENED,
-- RECENT and RETENTION (protocol.Stale, Listened, HandOffRecent and
-- FenceRetention, in ms) are set in front of the script, and the lock's
-- notice channel is the lock's key + ":notice" (protocol.Channel), built
-- here: what is not sent costs neither the client nor Redis anything on
-- every release.
-- Only if the lock still holds the token, passes it on and replies 1: when
-- nobody waits, the plain delete (the uncontended path: GET, EXISTS, DEL
-- and nothing else); else handOn, to the head of the line or deleted.
-- When ARGV[2] is the head of the line, handOn hands it the lock as it
-- hands any head (set to its name with its TTL and the next fencing token,
-- the waiter taken out of the line) but without a notice, and the reply
-- is {fence}: the caller hands the lock over. Only a waiter in the line is
-- served so: one that gives up takes itself out of the line and passes on
-- a lock handed to it, as any waiter does (package line's abandon.lua), so a lost reply
-- leaves nobody's lock behind.
-- Replies 0 when the lock was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
if redis.call("EXISTS", KEYS[3]) == 0 then
	redis.call("DEL", KEYS[1])
	return 1
end
local head, f = waitLine("handoff").handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[1] .. ":notice", STALE, LISTENED, RECENT, RETENTION, ARGV[2])
if ARGV[2] and head == ARGV[2] then
	return {f}
end
return 1

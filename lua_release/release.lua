-- release: KEYS the lock, its fencing counter, its line and the waiters'
-- last-seen times (protocol.Keys); ARGV[1] the owner's token. STALE,
-- RECENT and RETENTION (protocol.Stale, HandOffRecent and FenceRetention,
-- in ms) are set in front of the script, and the lock's notice channel is
-- the lock's key + ":notice" (protocol.Channel), built here: what is not
-- sent costs neither the client nor Redis anything on every release.
-- Only if the lock still holds the token, passes it on and replies 1: when
-- nobody waits, the plain delete (the uncontended path: GET, EXISTS, DEL
-- and nothing else); else handOn, to the head of the line or deleted.
-- Replies 0 when the lock was missing or someone else's.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
if redis.call("EXISTS", KEYS[3]) == 0 then
	redis.call("DEL", KEYS[1])
	return 1
end
handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[1] .. ":notice", STALE, LISTENED, RECENT, RETENTION)
return 1

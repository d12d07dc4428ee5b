-- abandon: lua_release's and redlock's (one node's part). KEYS the lock,
-- its fencing counter, its line and the waiters' last-seen times
-- (protocol.Keys); ARGV[1] the waiter's line member, ARGV[2] its name,
-- ARGV[3] the lock's notice channel (protocol.Channel). STALE, LISTENED,
-- RECENT and RETENTION are set in front of the script (AbandonSource).
-- Takes a waiter that gave up out of the line and, when a release handed
-- it the lock in the meantime, passes the lock on (handOn, or the plain
-- delete when nobody else waits); when the lock is free (a release that
-- found the waiter not alive named it in a head notice), tells the new
-- head to try, since waiters that listen for notices sleep until one
-- reaches them. Replies 1 when it passed a lock on, else 0.
local L = waitLine()
local handed = redis.call("GET", KEYS[1]) == ARGV[2]
if handed then
	waitLine("fence").readFence(KEYS[2]) -- a bad counter fails the script before it writes
end
L.leave(KEYS[3], KEYS[4], ARGV[1])
if not handed then
	if redis.call("EXISTS", KEYS[1]) == 0 then
		waitLine("notice").tellHead(KEYS[3], KEYS[4], ARGV[3])
	end
	return 0
end
if redis.call("EXISTS", KEYS[3]) == 0 then -- nobody else waits: the plain delete
	redis.call("DEL", KEYS[1])
	return 1
end
waitLine("handoff").handOn(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], STALE, LISTENED, RECENT, RETENTION)
return 1

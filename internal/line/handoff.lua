-- handoff: the hand-off of lua_release and redlock, shared by their
-- release scripts and abandon.lua, which start with the prelude, the
-- protocol's constants and this file (HandOnSource). On redlock each node
-- hands its own copy of the lock on: the waiter holds the lock once a
-- quorum of nodes handed it theirs (redlock's grants.go).
--
-- handOn passes the lock on once its owner is done with it: when the head
-- of the line is alive, the lock is set to that waiter's name with the
-- waiter's TTL, the waiter gets the next fencing token and leaves the
-- line, and a hand-off notice tells it that it holds the lock. The head is
-- alive when it made an attempt within the last `recent` ms, or when its
-- Locker listens on its inbox (PUBSUB NUMSUB: at least one subscriber, so
-- its process is up; a waiter that gives up passes a lock handed to it on,
-- abandon.lua) and it was seen within `listened` ms. On Redis Cluster
-- NUMSUB counts the subscribers of this node only, so a head listening on
-- another node counts as not listening. Otherwise the lock is deleted
-- and, when anyone waits, a head notice tells the head to try. Notices go
-- to the waiter's Locker only (inbox). A head unseen for `stale` ms whose
-- Locker does not listen, or unseen for `listened` ms, is dropped first
-- (liveHead). The fencing counter is read before anything is written, so
-- a bad counter fails the script with nothing written. The callers make
-- the plain delete themselves when nobody waits (EXISTS of the line),
-- before they need handOn.
-- quiet, when given, is the line member of a waiter of the caller's own
-- Locker (release.lua's ARGV[2]): at the head it is alive (it waits in
-- that Locker now) and is handed the lock without a notice, since the
-- caller hands it over itself. Returns the member handed the lock and its fencing
-- token, or nil when the lock was deleted instead.
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


-- line: the functions shared by acquire.lua and release.lua, which start
-- with this file. A node's line of waiters is two sorted sets: line
-- (member -> ticket) and seen (member -> the ms of its last attempt).
-- Members are "<locker>/<waiter>".

-- nowMs is the server's time in ms.
local function nowMs()
	local t = redis.call("TIME")
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- join puts member in the line with ticket (once: a ticket never changes)
-- and marks it seen at now. The line's keys expire stale*4 ms after the
-- last waiter joined: a line that outlives its waiters is garbage, and one
-- that expires under waiters is rebuilt by their next attempts, in the
-- same order, since the order is that of the tickets.
local function join(line, seen, ticket, member, now, stale)
	local new = redis.call("ZADD", seen, now, member)
	if redis.call("ZADD", line, "NX", ticket, member) + new > 0 then
		redis.call("PEXPIRE", line, stale * 4)
		redis.call("PEXPIRE", seen, stale * 4)
	end
end

-- tellHead publishes "head:<waiter>" to the inbox of the Locker of the
-- head of the line (channel .. "/" .. locker), unless the head is except,
-- so that only the waiter whose turn it is hurries.
local function tellHead(line, channel, except)
	local head = redis.call("ZRANGE", line, 0, 0)[1]
	if head and head ~= except then
		local locker, waiter = string.match(head, "^([^/]*)/(.+)$")
		if locker then
			redis.call("PUBLISH", channel .. "/" .. locker, "head:" .. waiter)
		end
	end
end

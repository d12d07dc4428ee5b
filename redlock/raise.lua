-- raise: the fencing write-back of a Redlock acquire on one node. It
-- starts with the line's Lua (line.Source) and the protocol's constants
-- (RETENTION, protocol.FenceRetention in ms, is the one it reads;
-- see useRetention).
-- KEYS[1] the lock, KEYS[2] its fencing counter. ARGV[1] the owner's
-- token, ARGV[2] the fencing token F and ARGV[3] the lock's TTL in ms.
-- While the lock still holds the token, sets the counter to max(counter, F)
-- (expiring as writeFence makes it) and replies 1; replies 0, changing
-- nothing, when the lock is missing or someone else's. A bad counter fails
-- the script, naming it, before it writes.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local F = waitLine("fence")
local stored, f = F.readFence(KEYS[2]), tonumber(ARGV[2])
if not stored or stored < f then
	F.writeFence(KEYS[2], f, ARGV[3], RETENTION)
end
return 1

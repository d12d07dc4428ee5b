-- abandon: KEYS[1] the line, KEYS[2] the waiters' last-seen times; ARGV[1]
-- the line member of a waiter that gave up. Takes it out of the line;
-- replies the number of entries removed.
redis.call("ZREM", KEYS[2], ARGV[1])
return redis.call("ZREM", KEYS[1], ARGV[1])

-- release: the release script of a technique that keeps a line of
-- waiters in Redis (ReleaseSource; its reply: ReadRelease). KEYS the
-- lock's four keys (protocol.Keys); ARGV[1] the owner's token and, from
-- an Unlock that hands the lock to a waiter of its own Locker
-- (HandOffer), ARGV[2] that waiter's line member (protocol.Member). The
-- work is line.lua's release.
return release(KEYS, ARGV[1], ARGV[2], STALE, LISTENED, RECENT, RETENTION)

// Package protocol is the one owner of the Redis-side wait protocol that
// lua_release and redlock share: the key and channel layout, the line of
// waiters kept in Redis, the encodings of line members and release
// notices, and the fencing-counter construction. The Lua every script of
// both techniques starts with, which reads and writes them, is package
// line's line.lua (line.Source).
//
//	import "github.com/lockzoo/lockzoo/internal/protocol"
//
// # Layout
//
// For a lock named name under Config.Prefix p, LockKey gives the lock's
// key: p + "{" + name + "}", or p + name when that already carries a Redis
// Cluster hash tag of its own (the first "{...}" with something between
// the braces). Every other key of the lock is the lock key and a suffix,
// so all of them hash to the lock's slot and start with p:
//
//	<lock>              the lock: the holder's token, with the TTL
//	<lock>:fence        the fencing counter (expires TTL + FenceRetention after it was made)
//	<lock>:line         the line of waiters: member -> order (a sorted set)
//	<lock>:seen         the waiters' last attempts: member -> ms (a sorted set)
//	<lock>:notice       release notices for anyone (pub/sub channel)
//	<lock>:notice:<id>  release notices for the Locker named id
//
// so an ACL user with "~<p>* &<p>*" may do all lockzoo does. The article
// techniques keep the key p + name their articles write, and the same
// channel rule (Channel).
//
// # The line of waiters
//
// A waiter in Lock joins the line when an attempt of its is refused, with
// a member "<ttl ms>/<locker>/<waiter>" (Member) and an order (the
// server's arrival time in µs for lua_release, the Lock call's ticket for
// redlock). While anyone waits, a free lock goes only to the head of the
// line. A waiter unseen for Stale is dropped (it gave up or died), except,
// in lua_release, one whose Locker listens on its inbox on the lock's node
// (PUBSUB NUMSUB), which is dropped when unseen for Listened. The line's
// keys expire 4 × Stale (redlock) or 4 × Listened (lua_release) after the
// last join, so a line outlives its waiters by at most that.
//
// # Notices
//
// A release publishes one notice body (Notice) on the inbox of the Locker
// whose waiter it concerns: "head:<waiter>" (the head may try now) or
// "handoff:<fence>:<waiter>" (the lock was handed to waiter, with that
// fencing token), and "" on Channel for anyone.
//
// # Hand-offs
//
// Package line's line.lua (handOn) is the one hand-off of both
// techniques (line.Source puts it in front of every script):
// a release whose line has a live head sets the lock to that waiter's
// name with its TTL and the next fencing token, takes it out of the line
// and sends it a "handoff:" notice; else it deletes the lock and sends
// "head:". On lua_release that notice hands the lock over; on redlock
// each node hands its own copy, and the waiter holds the lock once a
// quorum did. Line's abandon.lua (line.AbandonSource) takes a waiter
// that gave up out of the line and passes on a copy handed to it
// meanwhile, for both.
//
// # Fencing tokens
//
// A new holder's token is the stored counter + 1 (takeFence: INCR in the
// step that sets the lock), or, when there is no counter (never written,
// expired, evicted, or lost in a restart or FLUSHALL), the server's clock
// in µs (TIME), stored with an expiry of TTL + FenceRetention. An INCR
// keeps that expiry, and a hand-off or redlock's write-back sets it anew,
// so a counter lives at most TTL + FenceRetention past the last time it was
// made or written whole. A counter that is not a decimal integer in
// [0, 2^53), or a key of another type, is refused with an error naming the
// key, and nothing is written (the lock's SET is undone in the same
// script).
//
// Tokens strictly increase for successive holders of a key provided that
// (1) the server's clock does not step backwards, and (2) a key is not
// locked more than once per µs on average over its counter's life: then
// every counter stays at or below the server's clock, so a counter made
// anew from the clock exceeds any token issued before. For redlock the
// clock in (1) is that of the node that remade the counter, which must be
// ahead of the clock that made the previous holder's token: the nodes'
// clocks must differ by less than the time between one holder's acquire
// and the next's.
package protocol

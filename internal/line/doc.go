// Package line is lockzoo's wait protocol: how a Locker's Lock calls wait
// for a key, in Go (this package's .go files) and in Redis (line.lua,
// which every script of lua_release and redlock starts with, release.lua
// and abandon.lua). The engine keeps
// one Line per Locker; a technique plugs into it with its release
// (Technique), and, when it keeps a line of waiters in Redis, its Abandon
// (Abandoner) and, when its nodes hand their copies of a lock each, the
// hand-offs (Quorum).
//
//	import "github.com/lockzoo/lockzoo/internal/line"
//
// A Lock call, step by step:
//
//  1. It joins the Locker's local line for the key (Join). Only the head
//     contends in Redis; the others wait their turn, so local waiters are
//     served in order and one goroutine per key and process polls.
//  2. It makes its attempts (Waiter.Try numbers each, Attempt.SetTry
//     writes its token "<waiter>.<n>") and tells the line what each said
//     of its place in Redis (Place.Tried: the Place is the call's own, on
//     its stack): a refusal may have queued it there.
//  3. It waits for an event (Waiter.Events, read with Place.Heard): "try now"
//     (its turn came, or a release notice said the key may be free), or a
//     hand-off (the lock is its own). Between attempts it sleeps at most
//     the line's keep-place bound (Wait), so that a live waiter keeps its
//     place in Redis, and once it listens for notices (Subscribe) exactly
//     that, since a notice or a hand-off wakes it sooner.
//  4. A hand-off is read in three files: handoff.go, line.lua (release,
//     handOn) and the technique's release. A lease's Unlock releases
//     through the line (Release), which, for a HandOffer technique with a
//     local waiter, releases and makes the head's attempt in one step,
//     and gives that waiter the lock. A release in Redis hands the lock
//     to the live head of the line in Redis and publishes "handoff:" to
//     its Locker; OnNotice gives it to the waiter by that name. A Quorum
//     technique counts the nodes' hand-offs and gives the lock once
//     enough did (quorum.go).
//  5. It leaves (Leave): a waiter that gave up after a refusal is taken out
//     of the line in Redis (Abandon, abandon.lua, which passes on a lock
//     handed to it meanwhile) and remembered for a while (departed), so
//     that a hand-off that reaches its Locker after it left is passed on
//     too; a lock handed to it that it did not take is released. What
//     does not reach Redis is tried again in the background until it does
//     (cleanup.go), and Close waits for those tries.
//
// Known weaknesses: a notice is a hint, never relied on alone (a timer
// bounds every wait); a waiter that gave up during a fault holds a free
// lock back, and a lock handed to it stays held, until its Abandon reaches
// Redis or its place goes stale; on Redis Cluster a Locker listening on
// another node counts as not listening (line.lua).
package line

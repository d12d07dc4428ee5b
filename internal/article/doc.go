// Package article is the Redis steps that several of the articles'
// techniques share, written once: the SET NX EX acquire of articles 000
// and 002 (SetNXEX), the WATCH/MULTI/EXEC owner-checked transaction of
// article 000 (Watched), and the pipelined DEL and PUBLISH of a release
// (DeleteAndPublish, and DeleteHeld, the release without an owner check).
//
//	import "github.com/lockzoo/lockzoo/internal/article"
//
// Each step, as a technique uses it:
//
//  1. SetNXEX sends SET key token NX EX seconds, the TTL rounded up to
//     whole seconds (CeilSeconds) as the articles' int(math.ceil(...)).
//  2. Watched WATCHes the key, GETs it, and when it still holds the
//     owner's token sends MULTI, the command, an optional release notice
//     and EXEC in one round trip; an aborted EXEC starts it over.
//  3. DeleteHeld deletes the key whatever it holds and publishes the
//     release notice in the same round trip.
//
// Known weaknesses, which the techniques that use them demonstrate:
// SetNXEX's TTL has second granularity; DeleteHeld checks no owner, so it
// deletes a lock that expired and was taken by another client; Watched
// costs four round trips and starts over under write contention.
package article

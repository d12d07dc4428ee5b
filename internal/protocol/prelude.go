package protocol

import (
	_ "embed"
	"strings"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed prelude.lua
	prelude string
	//go:embed handoff.lua
	handOn string // handOn, which passes a released lock on to the line's head
	//go:embed abandon.lua
	abandon string // a waiter that gave up leaves the line, passing on a lock handed to it
)

// Script returns the script body, of keyCount keys, with the prelude (the
// functions lua_release's and redlock's scripts share) in front, ready to
// run with EVALSHA and a NOSCRIPT fallback.
func Script(keyCount int, body string) *redis.Script {
	return redis.NewScript(keyCount, Source(body))
}

// Source returns the source of the script body with the prelude in front,
// as Script runs it.
func Source(body string) string { return prelude + body }

// HandOnSource returns the source of the script body with the prelude, the
// Lua consts (the protocol's constants STALE, LISTENED, RECENT and
// RETENTION, which handOn reads) and handOn (handoff.lua: a release passes
// the lock on to the head of the line) in front: lua_release's and
// redlock's release scripts start so.
func HandOnSource(consts, body string) string { return prelude + consts + handOn + body }

// AbandonSource returns the source of the abandon script (abandon.lua),
// which lua_release and redlock share: KEYS the lock's four keys (Keys),
// ARGV the waiter's line member, its name and the lock's notice channel.
// It takes a waiter that gave up out of the line and passes on a lock a
// release handed to it meanwhile (handOn); consts as for HandOnSource.
func AbandonSource(consts string) string { return HandOnSource(consts, abandon) }

// Sharded returns the Lua source src made for a Redis Cluster, where
// notices go on shard channels: its PUBLISH calls become SPUBLISH and its
// PUBSUB NUMSUB calls PUBSUB SHARDNUMSUB (the subscribers of the lock's
// slot, on its master). Every channel a script publishes on shares the
// lock's hash tag (Channel, Inbox), so SPUBLISH stays in the script's slot.
func Sharded(src string) string {
	return strings.NewReplacer(`"PUBLISH"`, `"SPUBLISH"`, `"NUMSUB"`, `"SHARDNUMSUB"`).Replace(src)
}

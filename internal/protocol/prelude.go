package protocol

import (
	_ "embed"
	"strings"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed prelude.lua
	prelude string
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

// Sharded returns the Lua source src made for a Redis Cluster, where
// notices go on shard channels: its PUBLISH calls become SPUBLISH and its
// PUBSUB NUMSUB calls PUBSUB SHARDNUMSUB (the subscribers of the lock's
// slot, on its master). Every channel a script publishes on shares the
// lock's hash tag (Channel, Inbox), so SPUBLISH stays in the script's slot.
func Sharded(src string) string {
	return strings.NewReplacer(`"PUBLISH"`, `"SPUBLISH"`, `"NUMSUB"`, `"SHARDNUMSUB"`).Replace(src)
}

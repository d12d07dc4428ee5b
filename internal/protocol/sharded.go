package protocol

import "strings"

// Sharded returns the Lua source src made for a Redis Cluster, where
// notices go on shard channels: its PUBLISH calls become SPUBLISH and its
// PUBSUB NUMSUB calls PUBSUB SHARDNUMSUB (the subscribers of the lock's
// slot, on its master). Every channel a script publishes on shares the
// lock's hash tag (Channel, Inbox), so SPUBLISH stays in the script's slot.
func Sharded(src string) string {
	return strings.NewReplacer(`"PUBLISH"`, `"SPUBLISH"`, `"NUMSUB"`, `"SHARDNUMSUB"`).Replace(src)
}

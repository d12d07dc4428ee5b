// Package scripts holds the Lua scripts lockzoo's techniques share, loaded
// with go:embed and run with EVALSHA and a NOSCRIPT fallback (redigo's
// redis.Script).
//
//	import "github.com/lockzoo/lockzoo/internal/scripts"
package scripts

import (
	_ "embed"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed compare_delete.lua
	compareDelete string
	//go:embed compare_pexpire.lua
	comparePExpire string
)

// CompareDelete returns the owner-checked release script: KEYS[1] is the
// lock, ARGV[1] the owner's token and the optional ARGV[2] a channel to
// publish a release notice on; it replies 1 when it deleted the lock (and
// published) and 0 when the lock was missing or someone else's.
func CompareDelete() *redis.Script { return redis.NewScript(1, compareDelete) }

// ComparePExpire returns the owner-checked extend script: KEYS[1] is the
// lock, ARGV[1] the owner's token, ARGV[2] the new TTL in milliseconds; it
// replies 1 when it extended the lock and 0 when the lock was missing or
// someone else's.
func ComparePExpire() *redis.Script { return redis.NewScript(1, comparePExpire) }

// ComparePExpireSource returns ComparePExpire's source, for a runner that
// keeps its own (redisconn.NewScript).
func ComparePExpireSource() string { return comparePExpire }

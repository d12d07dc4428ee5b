package redisconn

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

// Sharded is a Pool over a Redis Cluster whose connections route each
// command to the master of its key's slot (package cluster). Over such a
// pool, notices go on shard channels: a connection sends PUBLISH as
// SPUBLISH, scripts publish with SPUBLISH and count listeners with PUBSUB
// SHARDNUMSUB, and listeners subscribe through Subscriber.
type Sharded interface {
	Pool
	// Subscriber returns a connection for SSUBSCRIBE and SUNSUBSCRIBE,
	// which subscribes each shard channel on the master of its slot.
	Subscriber(ctx context.Context) (redis.Conn, error)
}

// IsSharded reports whether pool is a Sharded pool.
func IsSharded(pool any) bool {
	_, ok := pool.(Sharded)
	return ok
}

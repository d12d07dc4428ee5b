// Package cluster is a Redis Cluster connection source for lockzoo: a
// Pool that keeps the cluster's slot map and sends each command to the
// master of its key's slot, usable wherever a strategy.Pool goes.
//
//	import "github.com/lockzoo/lockzoo/cluster"
//
// redigo has no cluster client; this is a small one, made for the
// commands lockzoo sends. A user writes:
//
//	pool, err := cluster.New(ctx, []string{"10.0.0.1:6379", "10.0.0.2:6379"})
//	if err != nil { return err }
//	defer pool.Close()
//	locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second})
//
// and the same for set_nx_ex, watch_multi, setnx_expire, getset_timestamp
// and its methods; redlock takes several Pools, one per independent
// cluster, as its nodes.
//
// # How it routes
//
//  1. New asks the first seed that answers for the slot map: CLUSTER
//     SHARDS (Redis 7, Valkey 8), or CLUSTER SLOTS on an older server. It
//     keeps one redigo pool per node (WithDial connects: AUTH, TLS).
//  2. A key's slot is CRC16 of its hash tag ({...}), or of the whole key,
//     modulo 16384 (Slot). lockzoo's keys, and the channels it publishes
//     on, share one tag per lock, so a lock's scripts and transactions
//     stay in one slot.
//  3. A connection from GetContext holds one connection per master it has
//     sent to. Each keyed command goes to its slot's master; a command
//     without a key to the node of the last keyed one, so that WATCH,
//     MULTI, EXEC follow their key; every command of a transaction to the
//     node of its MULTI. Replies come back in the order sent (an ECHO, a
//     Pipeline's mark, goes to every master written since the last), and
//     a redisconn.Pipeline over the Pool keeps one stream per master
//     (NodeOf, redisconn.Router).
//  4. MOVED updates the slot and asks the refresher (one goroutine, ended
//     by Close) to read the whole map again; the command is sent again to
//     the new master and its reply given in place of the MOVED. ASK sends
//     ASKING and the command, once, to the importing master (a
//     transaction there starts with ASKING). TRYAGAIN is retried with
//     backoff for up to 2 s. A queued command of a transaction that is
//     redirected makes the EXEC read as aborted (nil), as by its WATCH:
//     nothing of it ran, and the caller's next try goes to the new master.
//  5. Notices use shard channels: a connection sends PUBLISH as SPUBLISH;
//     lua_release's scripts use SPUBLISH and PUBSUB SHARDNUMSUB
//     (protocol.Sharded); listeners subscribe through Subscriber, one
//     connection per master. Classic PUBLISH on a cluster goes to every
//     node over the cluster bus; a shard channel stays in its shard. When
//     a slot moves, the server ends its channels' subscriptions
//     (sunsubscribe): the subscriber subscribes them again on the new
//     master.
//  6. A failed connection to a node asks for a refresh too, so a failover
//     is followed once the cluster has promoted a replica.
//
// Errors: CLUSTERDOWN comes back as an error wrapping ErrClusterDown (or
// ErrSlotUnserved for "Hash slot not served", as for a slot the map has
// no master for); a seed that is not a cluster node, or no seed that
// answers, fails New with ErrNotCluster; a command redirected too often
// fails with ErrRedirected. A technique wraps them as any Redis failure:
// TryLock returns it, Lock retries through it until its ctx ends.
//
// # Weaknesses
//
//   - A lock lives on one master. Replication is asynchronous: a failover
//     that promotes a replica the lock had not reached yet gives the lock
//     to a second holder (docs/cluster.md says what a failover costs).
//   - A failed master's slots are unavailable until the cluster promotes
//     a replica (cluster-node-timeout and the election): Lock retries
//     meanwhile, TryLock, Unlock and Extend fail.
//   - A transaction whose slot is moving does not complete until the move
//     ends (each try reads as aborted).
//   - A key with braces but no hash tag (such as "a{b") keeps its notice
//     channel in another slot: its release publishes with classic PUBLISH
//     inside a transaction, and its waiters are not woken by it.
//   - The connections are redigo's: RESP2, no client-side caching.
package cluster

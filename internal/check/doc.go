// Package check is `lockcompare check`: it connects to Redis servers as a
// service would and reports the settings that break a property one of
// lockzoo's techniques claims, one finding per hazard and address.
//
//	import "github.com/lockzoo/lockzoo/internal/check"
//
// # Algorithm
//
// For each address (host:port, or a redis:// / rediss:// URL as redigo's
// DialURL and redis-cli -u take it; -user/--user and -pass/-a or
// $REDISCLI_AUTH as redis-cli takes them; -tls, -cacert and -insecure for
// TLS) it reads INFO and, one parameter
// at a time, CONFIG GET, then reports one family per file:
//
//   - eviction (memory.go): maxmemory and maxmemory-policy. Any policy but
//     noeviction evicts held locks once memory is full; volatile-* spares
//     only the getset_timestamp family, whose keys have no expiry.
//   - persistence (persistence.go): appendonly, appendfsync, save. A node
//     that restarts without its locks breaks redlock's NodeFaultTolerant
//     unless it fsyncs every write or restarts only after the longest TTL.
//   - replication (replication.go): role, connected_slaves,
//     min-replicas-to-write. A failover to a lagging replica loses locks;
//     a replica address refuses (or worse, keeps to itself) every write.
//     With -replicas N (strategy.Config.Replicas of the service's
//     lua_release Lockers) it says whether they wait for every replica,
//     naming the setting when they wait for none.
//   - version (version.go): the server and its version (Redis, or Valkey
//     with the redis_version it reports besides), and COMMAND INFO of
//     every command the techniques send.
//   - cluster (cluster.go): cluster mode, whether one lock's keys (as
//     internal/protocol lays them out) share a slot under the prefix, and
//     whether the prefix's hash tag, if any, is served here.
//   - access (access.go, access.lua): tries, as this user, each command
//     under the prefix (one MULTI that sets an expiry first and deletes the
//     key last, so nothing stays), a PUBLISH and a SUBSCRIBE on a channel
//     under the prefix, the scripts' commands inside a script, and
//     redlock's CLIENT SETNAME.
//   - independence (independence.go), with two addresses or more: distinct
//     run_ids, distinct master_replids (a replica shares its primary's),
//     not one cluster, as redlock's masters must be.
//
// Each Finding carries the setting's value, the techniques whose claimed
// properties it breaks (Break: the technique's strategy.Properties.Name and
// the properties; Runs means the technique cannot lock at all), why, and
// what to change. Hazards to techniques -techniques leaves out become
// notes. Run exits ExitClean when no finding is a hazard, ExitHazard when
// one is, ExitCannot when an address could not be reached or the flags are
// bad.
//
// # Weaknesses
//
//   - A setting CONFIG GET refuses (managed Redis, an ACL without
//     +config) is reported unknown with the server's reason; only
//     maxmemory, maxmemory-policy and appendonly are read from INFO
//     instead, where INFO reports them exactly. An unknown does not change
//     the exit status, so a managed service can pass with unknowns: read
//     them.
//   - It sees the configuration, not the operations: a restart delay, a
//     failover policy (Sentinel, a managed service's) or a clock step are
//     not visible, so persistence and replication are judged on the
//     settings alone.
//   - The access check tries each command once on one scratch key; an ACL
//     that tells keys apart below the prefix (~lock:a*) can permit the
//     scratch key and refuse others.
//   - Independence is judged on what the servers say (run_id,
//     master_replid, cluster node ids); two independent servers on one
//     machine or one power supply pass.
package check

// Package redistest starts real, disposable Redis servers for tests: independent
// masters, replicas of them, and the faults a distributed lock must survive
// (a crashed node, a restarted node with or without its data, a frozen node,
// a promoted replica, a node out of memory, a network that delays, loses
// replies or loses everything).
//
// Start returns the nodes of one test and tears them down in t.Cleanup.
// Besides plain nodes it starts the set-ups production users run:
//
//   - StartCluster: a Redis Cluster of three masters (cluster-enabled yes,
//     a cluster configuration file each, the 16384 slots split in three
//     ranges, cluster_state:ok on every node). Cluster.NodeFor and
//     Cluster.PoolFor find the master that serves a key's slot, by CLUSTER
//     KEYSLOT and CLUSTER SLOTS; a command sent to another master gets
//     MOVED. WithClusterReplicas adds a replica per master, with a
//     cluster-node-timeout of 2 s. Cluster.MoveSlots and MoveKeys reshard
//     live as `redis-cli --cluster reshard` does (SETSLOT IMPORTING and
//     MIGRATING, MIGRATE, SETSLOT NODE), and Cluster.StartMove stops a move
//     half-way, for ASK. Cluster.Failover (CLUSTER FAILOVER) and
//     KillMaster (the master's process killed, its replica elected) swap a
//     master and its replica; Cluster.SlotMap reads the live slot map
//     (CLUSTER SHARDS, else CLUSTER SLOTS).
//   - StartReplicated(t, n): a primary and n replicas of it, started
//     together and synced, for WAIT and failover tests.
//   - StartSentinel(t, SentinelConfig{}): a primary, 2 replicas and 3
//     Sentinels (the server program with --sentinel and a generated
//     sentinel.conf: down-after-milliseconds 1000, failover-timeout 3000,
//     parallel-syncs every replica, the replicas and the other Sentinels known from the start, so
//     that a failover can begin at once), on either backend; in
//     containers every node and Sentinel announces its bridge gateway
//     address and published port. Sentinel.Failover runs SENTINEL
//     FAILOVER, KillMaster and WaitFailover kill the primary and wait
//     until every Sentinel names the promoted replica (AwaitReady, for a
//     test that kills the primary itself, waits until a failover can
//     begin at once), and Monitor names any node as a master (a
//     misconfiguration).
//   - Start(t, n, WithACL(users...)): nodes with an ACL file (aclfile) that
//     defines users, such as "app on >pw resetchannels ~app:* &app:* +@all";
//     Node.PoolAs connects as one of them. The user default keeps every
//     right, so the harness and Node.Pool keep working.
//
// NewProxy puts a TCP proxy on a leased loopback port in front of any address (a
// Node's, say) for network-fault tests: pass-through, Delay, DropReplies
// (commands reach Redis, replies are lost), DropNextReplies (exactly the
// next n replies are lost, whole, and the stream goes on), BlackHole
// (nothing gets through, connections stay open), Reset (every open
// connection closed) and Heal, switchable while traffic flows. Proxy.Pool
// dials through it. Node.ExhaustMemory puts a node over maxmemory with
// noeviction.
//
// Each plain node runs on one of two backends:
//
//   - "docker": one container per node (github.com/ory/dockertest/v3), its
//     port 6379 published on a fixed leased port of 127.0.0.1, so that a
//     killed and restarted node keeps its address. The same port is published on
//     the host's address on Docker's default bridge, where replicas reach
//     their master.
//   - "process": a redis-server child process on a leased loopback port,
//     with a directory of its own for the append-only file and the log. It
//     is ready once INFO server on its port names its pid (and PING
//     answers PONG), so that a server of another test on the same port is
//     never taken for it.
//
// Every port the harness listens on or hands to a server (a node's, a
// cluster bus port, a Sentinel's, a Proxy's, LeasePort's) is leased: it
// lies in 16384–32767, below Linux's ephemeral range, and is held by an
// exclusive flock on $TMPDIR/lockzoo-ports/<port>, so test binaries
// running side by side (go test -p N) never pick the same port. A node
// keeps its lease while killed and releases it when the test ends, after
// its server is dead. The files stay in the directory; a crashed test
// binary's locks go with it.
//
// The environment chooses the backend:
//
//   - LOCKZOO_REDIS_BACKEND=docker|process forces one; when it cannot run, the
//     test fails with the reason.
//   - Otherwise docker is used when an engine answers and a Redis image is
//     available locally, else process when redis-server is on PATH, else docker
//     after pulling redis:7-alpine; when nothing works the test fails with what
//     to install. Tests are never skipped.
//   - LOCKZOO_REDIS_IMAGE names the image for docker. By default it is
//     redis:7-alpine when present locally, else lockzoo/redis:local (built from
//     the host's redis-server by `make redis-image`), else redis:7-alpine is
//     pulled.
//   - LOCKZOO_REDIS_SERVER names the server program both backends run:
//     redis-server (the default) or valkey-server, Valkey standing in for
//     Redis. The process backend looks it up on PATH; the docker backend
//     runs it in valkey/valkey:8-alpine when present locally, else
//     lockzoo/valkey:local (`make redis-image
//     LOCKZOO_REDIS_SERVER=valkey-server` builds it from the host's
//     valkey-server), else pulls valkey/valkey:8-alpine.
//
// A cluster always runs on the process backend: under
// LOCKZOO_REDIS_BACKEND=docker it runs as processes anyway, with a log line
// saying so, and without redis-server on PATH StartCluster fails saying what
// to install. In containers each node would have to announce an address and
// a bus port that both the host and the other containers reach
// (cluster-announce-ip, -port and -bus-port, a second published port), so
// the cluster's gossip would run over Docker's bridge instead of loopback.
// Nodes with an ACL file run on either backend; in a container the file is
// copied to /data before the server starts.
//
// Containers carry the label lockzoo.test=1, so leftovers of a crashed test
// binary can be removed with
//
//	docker rm -f $(docker ps -aq --filter label=lockzoo.test=1)
//
// Child processes of the process backend are killed with the test binary on
// Linux (PR_SET_PDEATHSIG).
package redistest

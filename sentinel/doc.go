// Package sentinel is a connection source for a Redis (or Valkey) primary
// watched by Sentinels: it finds the primary, hands out connections to it,
// and follows it to a promoted replica after a failover. A *Pool goes
// wherever a strategy.Pool (or a *redis.Pool) does, so any lockzoo
// technique runs behind Sentinel unchanged.
//
//	import "github.com/lockzoo/lockzoo/sentinel"
//
//	pool, err := sentinel.New(ctx, "mymaster", []string{"10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"})
//	...
//	defer pool.Close()
//	locker, err := luarelease.New(pool, strategy.Config{})
//
// # How it works
//
//  1. New asks the Sentinels in turn, the one that answered last first,
//     for the master's address: SENTINEL GET-MASTER-ADDR-BY-NAME. The
//     first that names it wins; one that does not know the name, or
//     does not answer, sends New to the next.
//  2. Every new connection to the master is checked with ROLE. One that
//     finds anything but a master is refused (ErrNotMaster); GetContext
//     then asks the Sentinels again and moves to the master they name.
//     A master that cannot be reached (a dead one) makes GetContext ask
//     again too, at most every 100 ms across callers, so that the first
//     call after the Sentinels promote a replica reaches it.
//  3. A listener, one goroutine per Pool that lives until Close,
//     subscribes to +switch-master on one Sentinel and moves the Pool to
//     each new master announced for its name. It PINGs that Sentinel
//     (WithHealthInterval) and, when it stops answering, listens to the
//     next one, asking the Sentinels once after subscribing for a switch
//     it may have missed.
//  4. Moving to a new master closes the connections to the old one that
//     sit idle, at once, and each lent one when it is given back.
//  5. A connection lent before a switch stays on the old master. When
//     that node comes back as a replica, a write on it fails with
//     READONLY (the caller sees that error: nothing was written); the
//     Pool marks the old master suspect and the next GetContext asks the
//     Sentinels before lending another.
//
// The Sentinels and the data nodes authenticate separately
// (WithSentinelAuth, WithAuth), and each has its own dial options
// (WithSentinelDialOptions, WithDialOptions: TLS and the like). The data
// nodes' user needs ROLE (+role) besides the lock's commands.
//
// Errors wrap ErrUnknownMaster (no Sentinel that answered knows the
// name), ErrNoSentinel (none answered), ErrNotMaster (the named master
// is not one), strategy.ErrInvalidConfig (bad arguments to New) and
// strategy.ErrClosed (a call after Close), and start "lockzoo: sentinel:".
//
// # Known weaknesses
//
//   - Sentinel fails over asynchronously replicated data: a lock taken on
//     the old master that had not reached the promoted replica is lost,
//     and another client can take it at once. Following the master does
//     not change that; leases acknowledged by replicas
//     (strategy.Config.Replicas, WAIT) do. See docs/sentinel.md.
//   - Between the master's death and the promotion (down-after-milliseconds
//     plus the election, a few seconds), every call fails: locks cannot be
//     taken, extended or released.
//   - A partitioned old master keeps accepting writes from clients on its
//     side until it learns of the new master; a lease taken there is lost
//     when it rejoins. min-replicas-to-write on the data nodes bounds that
//     window.
//   - The Sentinel addresses are those given to New; Sentinels added
//     later are not discovered (SENTINEL SENTINELS is not asked).
package sentinel

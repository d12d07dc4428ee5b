package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/scripts"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker is a Redlock over independent Redis masters. It is safe for
// concurrent use.
type Locker struct {
	e   *engine.Locker
	t   *technique
	cfg Config
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis masters behind
// pools, one pool per independent node (no replication between them).
//
// It returns an error wrapping strategy.ErrInvalidConfig that names the
// field when pools is empty, a pool is nil (pools[i]), Quorum is outside
// 1..len(pools), DriftFactor or NodeTimeout is negative, or a
// strategy.Config field is out of range (negative TTL, TTL below 1 ms).
//
// The same pool given twice is accepted but unsafe: that node then votes
// twice, so a quorum can be reached with fewer real nodes than Quorum.
//
// Any redis.Conn serves (see strategy.Pool): NodeTimeout bounds a node's
// call through redis.ConnWithTimeout's read deadline, else through
// redis.ConnWithContext; a connection with neither is bounded by its own
// timeouts only. A pool that returns no connection, or a pool or
// connection that panics, is that node's failure: the panic is recovered
// in the node's goroutine.
func New(pools []strategy.Pool, cfg Config) (*Locker, error) {
	if cfg.Config.Retry == nil {
		cfg.Config.Retry = DefaultRetry()
	}
	base, err := cfg.Config.WithDefaults()
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	s, err := check(pools, cfg, base.TTL)
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	sharded := shardedPools(pools)
	if sharded > 0 {
		// A Redis Cluster node is many masters, each with its own
		// run_id: the guard, which watches one server per node, is off.
		s.guard = false
	}
	t := &technique{
		s:       s,
		sharded: sharded == len(pools),
		extend:  redisconn.NewScript(1, scripts.ComparePExpireSource()),
		clock:   clock{origin: time.Now()},
		getname: redisconn.Command{Name: "CLIENT", Args: []any{"GETNAME"}},
	}
	t.useRetention(protocol.FenceRetention)
	t.maxTTL.Store(int64(base.TTL))
	for i, p := range pools {
		t.nodes = append(t.nodes, &node{index: i, pipe: redisconn.NewDeadlinePipeline(p), acquirePoint: pointAcquireOn(i), releasePoint: pointReleaseOn(i)})
	}
	// Waiters listen for release notices on every node: any node's notice
	// wakes them (Release publishes on each node it deletes from, to the
	// inbox of the head of that node's line).
	e, err := engine.New(t, properties(), cfg.Config, engine.WithTaggedKeys(), engine.WithInboxNotices(pools...), engine.WithLine(LineStale), engine.WithListened(LineListened), engine.WithNoticeWaits(), engine.WithoutTakeBack(), engine.WithoutAttemptBound())
	if err != nil {
		return nil, err
	}
	t.e, t.closing = e, e.Closed()
	cfg.Config = e.Config()
	t.args.Set(cfg.Config.TTL, e.ID())
	cfg.Quorum, cfg.DriftFactor, cfg.NodeTimeout = s.quorum, s.drift, s.nodeTimeout
	return &Locker{e: e, t: t, cfg: cfg}, nil
}

// name is the technique's name, in its Properties and its errors.
const name = "redlock"

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              name,
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         false,
		NodeFaultTolerant: true,
		Fencing:           true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
}

// TryLock makes one attempt to acquire key on every node. It returns the
// Lease when a quorum granted it within the validity; its Fence is the
// fencing token (see the package documentation). It returns an error
// wrapping strategy.ErrNotAcquired when enough nodes refused (held by
// someone else, or left out by the restart guard) that no quorum is
// possible, and then, when the refusing nodes reported the holder's
// remaining TTL, an *engine.BusyError with the shortest of them;
// strategy.ErrInvalidConfig for an empty key; and otherwise an error
// wrapping the nodes' failures (matching context.DeadlineExceeded when
// nodes timed out, or ctx.Err() when ctx ended), including a fencing
// write-back that did not reach a quorum. A failed attempt releases every
// node it may have locked, in the background.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying after jittered waits (Config.Retry) until it
// succeeds or ctx ends. It waits in each node's line of waiters, served in
// the order the Lock calls began (see "Waiting in line" in the package
// documentation). A waiter also retries at once when a release notice
// naming it arrives from any node (it listens on every node, one
// subscription connection per node for the whole Locker), and no later
// than the holder's remaining TTL or LineStale/2 (LineListened/2 once the
// nodes saw its Locker listening). When it gives up the
// error wraps strategy.ErrNotAcquired, ctx.Err() and the last failure, if
// there was one.
//
// The returned Lease's Unlock returns nil once a quorum deleted the lock, or
// once every node answered and the lock is released all the same (a node
// deleted it and too few nodes may still hold it to form a quorum); it
// returns an error wrapping strategy.ErrNotHeld when more than N-Quorum
// nodes said the lock was not ours. When a goroutine of the same Locker
// waits for the key, Unlock hands the lock to it in the same round. Its
// Extend needs a quorum of nodes that still hold the lock and moves
// Deadline to the new validity, else it returns an error wrapping
// strategy.ErrNotHeld when the lock was lost.
// Otherwise both return the nodes' failures, which match neither sentinel.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire, owner-safe release, tolerance of the
// loss of a minority of nodes, fencing tokens, one (parallel) round trip
// each way (an acquire takes a second one only when the nodes' fencing
// counters disagree), and no clock safety.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Config returns the Locker's configuration with every default filled in
// (Quorum, DriftFactor, NodeTimeout, and the strategy.Config fields).
func (l *Locker) Config() Config { return l.cfg }

// Wait blocks until every background call of this Locker has ended, or ctx
// ends (it then returns ctx.Err()). Background calls are the answers a
// decision did not wait for: slow or frozen nodes, releases after a failed
// attempt, and the nodes an Unlock or Extend did not need for its quorum.
// Each ends on its own within about twice Config.NodeTimeout; Wait is for
// tests and for a clean shutdown.
func (l *Locker) Wait(ctx context.Context) error { return l.t.bg.wait(ctx) }

// useRetention builds the scripts that read the protocol's constants, with
// fencing counters kept for retention after their lock's TTL
// (protocol.FenceRetention; tests shorten it). Call it before the
// technique is used.
func (t *technique) useRetention(retention time.Duration) {
	consts := constants(retention)
	src := func(s string) string { return s }
	if t.sharded { // every node a Redis Cluster: notices on shard channels
		src = protocol.Sharded
	}
	t.acquireScript = redisconn.NewScript(4, src(protocol.Source(consts+acquireSource)))
	t.raise = redisconn.NewScript(2, src(protocol.Source(consts+raiseSource)))
	t.release = redisconn.NewScript(4, src(protocol.HandOnSource(consts, releaseSource)))
	t.abandon = redisconn.NewScript(4, src(protocol.AbandonSource(consts)))
}

// shardedPools counts the pools that are Redis Clusters
// (redisconn.Sharded, a cluster.Pool).
func shardedPools(pools []strategy.Pool) int {
	n := 0
	for _, p := range pools {
		if redisconn.IsSharded(p) {
			n++
		}
	}
	return n
}

// constants is the Lua that sets the protocol's constants the scripts
// read (STALE, protocol.Stale; LISTENED, protocol.Listened; RECENT,
// protocol.HandOffRecent; and RETENTION, the fencing counters' retention,
// in ms), put in front of them after the prelude: a constant in the
// script's text costs nothing per call, an argument costs the client its
// boxing and every node its parsing.
func constants(retention time.Duration) string {
	return fmt.Sprintf("local STALE, LISTENED, RECENT, RETENTION = %d, %d, %d, %d\n",
		LineStale.Milliseconds(), LineListened.Milliseconds(), protocol.HandOffRecent.Milliseconds(), retention.Milliseconds())
}

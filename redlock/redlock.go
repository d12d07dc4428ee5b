package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/owed"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/restartguard"
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

// New returns a Locker over pools, one pool per independent master.
//
// It returns an error wrapping strategy.ErrInvalidConfig that names the
// field when pools is empty, a pool is nil (pools[i]), Quorum is outside
// 1..len(pools), DriftFactor or NodeTimeout is negative, or a
// strategy.Config field is out of range. The same pool given twice votes
// twice, which is unsafe. NodeTimeout bounds a node's call through
// redis.ConnWithTimeout, else redis.ConnWithContext; a pool or connection
// that fails or panics is that node's failure.
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
	}
	t.rg = restartguard.New(t.exclusion)
	t.useRetention(protocol.FenceRetention)
	t.maxTTL.Store(int64(base.TTL))
	for i, p := range pools {
		n := &node{index: i, pipe: redisconn.NewDeadlinePipeline(p), acquirePoint: pointAcquireOn(i), releasePoint: pointReleaseOn(i)}
		n.owed.Suspect = n.br.Suspect
		t.nodes = append(t.nodes, n)
	}
	// Waiters listen on every node: a release notifies the head of that
	// node's line.
	e, err := engine.New(t, properties(), cfg.Config, engine.WithTaggedKeys(), engine.WithInboxNotices(pools...), engine.WithLine(LineStale), engine.WithListened(LineListened), engine.WithNoticeWaits(), engine.WithoutTakeBack(), engine.WithoutAttemptBound())
	if err != nil {
		return nil, err
	}
	t.line = e.Line()
	t.payer = owed.Payer{Timeout: s.nodeTimeout, Closing: e.Closed(), BG: &t.bg}
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

// TryLock makes one attempt on every node. It returns the Lease when a
// quorum granted it within the validity; its Fence is the fencing token.
// It returns an error wrapping strategy.ErrNotAcquired when refusals rule a
// quorum out (an *engine.BusyError with the shortest remaining TTL when the
// nodes reported one), strategy.ErrInvalidConfig for an empty key, and
// otherwise the nodes' failures (matching context.DeadlineExceeded on
// timeouts, or ctx.Err()), a failed fencing write-back included. A failed
// attempt is released in the background.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, waiting in every node's line until it succeeds or ctx
// ends. A waiter retries when a release notice naming it arrives, no later
// than the holder's remaining TTL or the line's keep-place bound, and on
// Config.Retry until it listens. Giving up returns an error wrapping
// strategy.ErrNotAcquired, ctx.Err() and the last failure.
//
// The Lease's Unlock returns nil once a quorum deleted the lock, or once
// every node answered and too few may still hold it to form a quorum; it
// hands the lock in the same round to a waiting goroutine of this Locker.
// Extend needs a quorum that still holds the lock and moves Deadline. Both
// return an error wrapping strategy.ErrNotHeld when more than N-Quorum
// nodes said the lock was not ours, else the nodes' failures.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire, owner-safe release, tolerance of a
// minority of failed nodes, fencing, one parallel round trip each way and
// no clock safety.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Config returns the Locker's configuration with every default filled in.
func (l *Locker) Config() Config { return l.cfg }

// Wait blocks until every background node call of this Locker has ended
// (answers a decision did not wait for, releases of failed attempts, owed
// releases, the line's clean-ups), or returns ctx.Err() when ctx ends first. Each ends within
// about twice Config.NodeTimeout.
func (l *Locker) Wait(ctx context.Context) error {
	if err := l.e.Line().Idle(ctx); err != nil { // clean-ups make node calls
		return err
	}
	return l.t.bg.Wait(ctx)
}

// Close ends the notice connections, then waits for the background calls
// (Wait), which may be releases, for at most closeBound. Waiting Lock calls
// give up with strategy.ErrNotAcquired and strategy.ErrClosed; later
// TryLock, Lock and Extend calls return strategy.ErrClosed, while Unlock
// still releases. It returns nil, or an error wrapping
// context.DeadlineExceeded when background calls outlast the bound; a
// second Close does nothing more.
func (l *Locker) Close() error {
	if err := l.e.Close(); err != nil {
		return lockerr.New(name, fmt.Errorf("close: %w", err))
	}
	l.t.closeGrants()
	ctx, cancel := context.WithTimeout(context.Background(), l.closeBound())
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		return lockerr.New(name, fmt.Errorf("close: background calls still running: %w", err))
	}
	return nil
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

// closeBound is twice NodeTimeout, the most a background call takes, and a
// second for a loaded machine.
func (l *Locker) closeBound() time.Duration { return 2*l.cfg.NodeTimeout + time.Second }

// useRetention builds the scripts with fencing counters kept for retention
// after their lock's TTL (tests shorten it). Call it before any use.
func (t *technique) useRetention(retention time.Duration) {
	// Constants in the scripts' text cost nothing per call.
	consts := fmt.Sprintf("local STALE, LISTENED, RECENT, RETENTION = %d, %d, %d, %d\n",
		LineStale.Milliseconds(), LineListened.Milliseconds(), protocol.HandOffRecent.Milliseconds(), retention.Milliseconds())
	src := func(s string) string { return s }
	if t.sharded { // every node a Redis Cluster: notices on shard channels
		src = protocol.Sharded
	}
	t.acquireScript = redisconn.NewScript(4, src(protocol.Source(consts+acquireSource)))
	t.raise = redisconn.NewScript(2, src(protocol.Source(consts+raiseSource)))
	t.release = redisconn.NewScript(4, src(line.HandOnSource(consts, releaseSource)))
	t.abandon = redisconn.NewScript(4, src(line.AbandonSource(consts)))
}

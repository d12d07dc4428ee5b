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
	e *engine.Locker
	t *technique
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker over pools, one pool per independent master (a
// pool given twice votes twice). It returns an error wrapping
// strategy.ErrInvalidConfig that names the field when pools is empty, a
// pool is nil, Quorum is outside 1..len(pools), DriftFactor or NodeTimeout
// is negative, or a strategy.Config field is out of range.
func New(pools []strategy.Pool, cfg Config) (*Locker, error) {
	if cfg.Config.Retry == nil {
		cfg.Config.Retry = DefaultRetry()
	}
	base, err := cfg.Config.WithDefaults()
	if err != nil {
		return nil, lockerr.New(name, err)
	}
	if cfg, err = check(pools, cfg, base.TTL); err != nil {
		return nil, lockerr.New(name, err)
	}
	t := &technique{cfg: cfg, guard: !cfg.DisableRestartGuard, extend: redisconn.NewScript(1, scripts.ComparePExpireSource())}
	sharded := 0 // Redis Clusters (cluster.Pool) among the nodes
	for _, p := range pools {
		if redisconn.IsSharded(p) {
			sharded++
			t.guard = false // many servers, many run_ids behind one node
		}
	}
	t.sharded = sharded == len(pools)
	t.rg = restartguard.New(t.exclusion)
	t.useRetention(protocol.FenceRetention)
	t.maxTTL.Store(int64(base.TTL))
	for i, p := range pools {
		n := &node{index: i, pipe: redisconn.NewDeadlinePipeline(p), acquirePoint: pointAcquireOn(i), releasePoint: pointReleaseOn(i)}
		n.owed.Suspect = n.br.Suspect
		t.nodes = append(t.nodes, n)
	}
	e, err := engine.New(t, properties(), cfg.Config, engine.WithTaggedKeys(), engine.WithInboxNotices(pools...), engine.WithLine(LineStale), engine.WithListened(LineListened), engine.WithNoticeWaits(), engine.WithoutTakeBack(), engine.WithoutAttemptBound())
	if err != nil {
		return nil, err
	}
	t.payer = owed.Payer{Timeout: cfg.NodeTimeout, Closing: e.Closed(), BG: &t.bg}
	t.cfg.Config = e.Config()
	t.args.Set(t.cfg.TTL, e.ID())
	return &Locker{e: e, t: t}, nil
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

// TryLock makes one attempt on every node and returns the Lease when a
// quorum granted it within the validity; its Fence is the fencing token.
// Else it returns an error wrapping strategy.ErrNotAcquired when refusals
// rule a quorum out, strategy.ErrInvalidConfig for an empty key, or the
// nodes' failures (context.DeadlineExceeded on timeouts, ctx.Err()).
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, waiting in every node's line until it succeeds or ctx
// ends; giving up returns an error wrapping strategy.ErrNotAcquired,
// ctx.Err() and the last failure. The Lease's Unlock and Extend return an
// error wrapping strategy.ErrNotHeld when more than N-Quorum nodes said
// the lock was not ours, else nil or the nodes' failures.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports mutual exclusion, atomic acquire, owner-safe release,
// node-fault tolerance, fencing and one round trip each way; no clock safety.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

// Config returns the Locker's configuration with every default filled in.
func (l *Locker) Config() Config { return l.t.cfg }

// Wait blocks until every background node call of this Locker has ended
// (late answers, releases of failed attempts, owed releases, the line's
// clean-ups), or returns ctx.Err() when ctx ends first.
func (l *Locker) Wait(ctx context.Context) error {
	if err := l.e.Idle(ctx); err != nil { // the line's clean-ups make node calls
		return err
	}
	return l.t.bg.Wait(ctx)
}

// Close ends the notice connections and waits for the background calls
// (Wait) for at most twice NodeTimeout, the most one takes, plus a second
// for a loaded machine. Waiting Lock calls give up with
// strategy.ErrClosed; later TryLock, Lock and Extend return it, while
// Unlock still releases. It returns nil, or an error wrapping
// context.DeadlineExceeded when background calls outlast the bound.
func (l *Locker) Close() error {
	if err := l.e.Close(); err != nil {
		return lockerr.New(name, fmt.Errorf("close: %w", err))
	}
	l.t.closeGrants()
	ctx, cancel := context.WithTimeout(context.Background(), 2*l.t.cfg.NodeTimeout+time.Second)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		return lockerr.New(name, fmt.Errorf("close: background calls still running: %w", err))
	}
	return nil
}

// useRetention builds the scripts with fencing counters kept for retention
// after their lock's TTL (tests shorten it). Call it before any use.
func (t *technique) useRetention(retention time.Duration) {
	consts := fmt.Sprintf("local STALE, LISTENED, RECENT, RETENTION = %d, %d, %d, %d\n",
		LineStale.Milliseconds(), LineListened.Milliseconds(), protocol.HandOffRecent.Milliseconds(), retention.Milliseconds())
	src := func(s string) string { return s }
	if t.sharded { // every node a Redis Cluster: notices on shard channels
		src = protocol.Sharded
	}
	t.acquireScript = redisconn.NewScript(4, src(line.Source(consts+acquireSource)))
	t.raise = redisconn.NewScript(2, src(line.Source(consts+raiseSource)))
	t.release = redisconn.NewScript(4, src(line.Source(consts+releaseSource)))
	t.abandon = redisconn.NewScript(4, src(line.AbandonSource(consts)))
}

package luarelease

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/scripts"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker is a single-node Redis lock with a Lua compare-and-delete release.
// It is safe for concurrent use.
type Locker struct {
	e *engine.Locker
}

var _ strategy.Locker = (*Locker)(nil)

// New returns a Locker that keeps its locks on the Redis server behind pool.
// It returns an error wrapping strategy.ErrInvalidConfig when pool is nil or
// a Config field is out of range (negative TTL, TTL below 1 ms, negative
// Replicas, a ReplicaTimeout not below the TTL). With Config.Replicas (or
// WaitAOF) every acquire, extend and hand-off waits for the replicas'
// acknowledgement; see the package documentation and docs/replicas.md.
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	return newLocker(pool, cfg, FenceRetention)
}

// newLocker is New with fencing counters kept for retention after their
// lock's TTL (tests shorten it).
func newLocker(pool strategy.Pool, cfg strategy.Config, retention time.Duration) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(properties(cfg).Name, err)
	}
	full, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(properties(cfg).Name, err)
	}
	w := &replicaWait{n: full.Replicas, timeout: full.ReplicaTimeout, aof: full.WaitAOF}
	t := newReplicatedTechnique(pool, retention, w)
	e, err := engine.New(t, properties(full), cfg, engine.WithTaggedKeys(), engine.WithInboxNotices(pool), engine.WithLine(LineStale), engine.WithListened(LineListened), engine.WithNoticeWaits(), engine.WithReplicas())
	if err != nil {
		return nil, err
	}
	t.args.Set(e.Config().TTL, e.ID())
	return &Locker{e: e}, nil
}

// properties are the guarantees a Locker with the Config cfg (defaults
// filled) claims: with Config.Replicas, NodeFaultTolerant too, and the
// WAIT's round trip (and WAITAOF's) on every acquire.
func properties(cfg strategy.Config) strategy.Properties {
	p := strategy.Properties{
		Name:              "lua_release",
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		Fencing:           true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
	if cfg.Replicas > 0 {
		// With every replica waited for and a failover that promotes the
		// most up-to-date one (docs/replicas.md).
		p.NodeFaultTolerant = true
		p.AcquireRoundTrips++
	}
	if cfg.WaitAOF {
		p.AcquireRoundTrips++
	}
	return p
}

// TryLock makes one attempt to acquire key. It returns the Lease on success,
// an error wrapping strategy.ErrNotAcquired when someone else holds key,
// strategy.ErrInvalidConfig for an empty key, and the wrapped Redis failure
// (matching ctx.Err() when ctx ended) otherwise.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.TryLock(ctx, key)
}

// Lock acquires key, retrying under Config.Retry until it succeeds or ctx
// ends, waiting in the key's line in Redis; a release may hand the lock
// straight to it (see the package documentation). With a context that
// never ends it waits like sync.Mutex.Lock. When it gives up the error
// wraps strategy.ErrNotAcquired, ctx.Err() and the last Redis failure, if
// there was one.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	return l.e.Lock(ctx, key)
}

// Properties reports atomic acquire, owner-safe release, clock safety and
// fencing, one round trip each way, and no tolerance of node failure;
// with Config.Replicas, tolerance of a failover (under the conditions
// docs/replicas.md states) and one more round trip per acquire, the
// WAIT.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

//go:embed acquire.lua
var acquireSource string // its reply: readAcquire

// LineStale is how long a waiter in Lock may go without an attempt before
// it loses its place in the line (protocol.Stale), unless its Locker
// listens for notices on the lock's node (LineListened). Lock attempts at
// least every strategy.DefaultRetryMax with the default Retry until it
// listens, and at least every LineStale/2 whatever the Retry policy, so a
// live waiter keeps its place.
const LineStale = protocol.Stale

// LineListened is how long a waiter whose Locker listens for notices on
// the lock's node may go without an attempt before it loses its place
// (protocol.Listened): such a waiter sleeps until a notice or a hand-off
// wakes it, or LineListened/2 passes, so waiting costs Redis one attempt
// per waiter per LineListened/2.
const LineListened = protocol.Listened

// HandOffRecent is how recently the waiter at the head of the line must
// have made an attempt for a release to hand it the lock directly
// (protocol.HandOffRecent). A waiter in Lock attempts at least every
// strategy.DefaultRetryMax with the default Retry; when the head was not
// seen that recently (a slower Retry policy, or a waiter that may have
// died), the release deletes the lock and names the head in its notice
// instead, and the lock waits for that head for up to LineStale.
const HandOffRecent = protocol.HandOffRecent

// FenceRetention is how long a lock's fencing counter outlives the TTL of
// the last lock it fenced (protocol.FenceRetention); see the package
// documentation for what happens after.
const FenceRetention = protocol.FenceRetention

// FenceKey is the Redis key of the fencing counter kept for the lock key
// rkey (see the package documentation for the layout).
func FenceKey(rkey string) string { return protocol.KeysOf(rkey).Fence }

// newTechnique returns lua_release's Redis commands over pool, with
// fencing counters kept for retention after their lock's TTL.
func newTechnique(pool strategy.Pool, retention time.Duration) *technique {
	return newReplicatedTechnique(pool, retention, nil)
}

// newReplicatedTechnique is newTechnique for a Locker that waits for its
// replicas as w says (nil: none).
func newReplicatedTechnique(pool strategy.Pool, retention time.Duration, w *replicaWait) *technique {
	consts := constants(retention, w.on())
	src := func(s string) string { return s }
	if redisconn.IsSharded(pool) { // a Redis Cluster: notices on shard channels
		src = protocol.Sharded
	}
	return &technique{
		pool:    pool,
		pipe:    redisconn.NewPipeline(pool),
		acquire: redisconn.NewScript(4, src(line.Source(consts+acquireSource))),
		abandon: redis.NewScript(4, src(line.AbandonSource(consts))),
		release: redisconn.NewScript(4, src(line.ReleaseSource(consts))),
		extend:  scripts.ComparePExpire(),
		wait:    w,
	}
}

// constants is the Lua that sets the protocol's constants the acquire,
// release and abandon scripts read (STALE, RECENT, RETENTION, in ms) in front of them:
// a constant in the script's text costs nothing per call, an argument
// costs the client its boxing and Redis its parsing. REPLICATED is true
// for a Locker that waits for its replicas (acquire.lua's hand-off path).
func constants(retention time.Duration, replicated bool) string {
	return fmt.Sprintf("local STALE, LISTENED, RECENT, RETENTION, REPLICATED = %d, %d, %d, %d, %v\n",
		LineStale.Milliseconds(), LineListened.Milliseconds(), HandOffRecent.Milliseconds(), retention.Milliseconds(), replicated)
}

// technique holds lua_release's Redis commands.
type technique struct {
	pool    strategy.Pool
	pipe    *redisconn.Pipeline // the acquire and release scripts, over one shared connection
	acquire *redisconn.Script
	abandon *redis.Script
	release *redisconn.Script
	extend  *redis.Script
	args    engine.LockerArgs // the Locker's TTL and name, boxed once
	// wait is how the Locker waits for its replicas (replicas.go); nil
	// waits for none.
	wait *replicaWait
}

func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	k := protocol.KeysOf(a.Key)
	args := t.acquire.Args(8)
	args = append(args, k.Lock, k.Fence, k.Line, k.Seen, a.Token, t.args.TTL(a.TTL))
	if a.Waits { // a TryLock joins no line, and sends neither
		args = append(args, t.args.Locker(a.Locker))
		if !a.TokenNamesWaiter() { // else the script reads the name from the token
			args = append(args, a.Waiter)
		}
	}
	if t.wait.on() {
		return t.acquireReplicated(ctx, a, args)
	}
	reply, err := t.acquire.Call(ctx, t.pipe, args)
	return t.acquired(a, args, reply, err)
}

// acquired turns acquire.lua's reply to the attempt a, made with args (or
// the call's error), into its outcome: the lock taken (its fencing
// token), handed to the waiter, or refused (a BusyError).
func (t *technique) acquired(a engine.Attempt, args []any, reply any, err error) (engine.Acquired, error) {
	r, err := readAcquire(reply, err)
	switch {
	case err != nil:
		return engine.Acquired{}, fmt.Errorf("acquire: %w", err)
	case r.handed:
		// Handed to this waiter by a release: what the lock has left,
		// counted from before this attempt was sent, is a safe validity.
		return engine.Acquired{Value: a.Waiter, Fence: r.fence, Validity: time.Duration(r.pttl) * time.Millisecond, Keys: args[2:6:6]}, nil
	case r.took:
		return engine.Acquired{Fence: r.fence, Keys: args[2:6:6]}, nil
	}
	return engine.Acquired{}, &engine.BusyError{Key: a.Key, Remaining: remaining(r.pttl), Listened: r.listened,
		Counter: r.counter, Counted: r.counted}
}

// acquireReply is acquire.lua's reply, as readAcquire reads it.
type acquireReply struct {
	took   bool   // the lock is ours, with fencing token fence
	handed bool   // a release handed it to the waiter: it has pttl ms left
	fence  uint64 // when took or handed
	// pttl is, when refused, what the holder's lock has left (-2: the
	// lock is free but kept for the head of the line).
	pttl int64
	// A refused Lock's reply also says whether its Locker listens on its
	// inbox on the lock's node, and what the fencing counter was (-1:
	// none), when counted.
	listened bool
	counter  int64
	counted  bool
}

// readAcquire reads acquire.lua's reply (or returns the call's error):
// a fencing token when the lock is ours, {2, fence, pttl} when a release
// had handed it to the waiter, {0, pttl} when a TryLock is refused and
// {0, pttl, listened, counter} when a Lock is.
func readAcquire(reply any, err error) (acquireReply, error) {
	if err != nil {
		return acquireReply{}, err
	}
	if f, ok := reply.(int64); ok && f > 0 {
		return acquireReply{took: true, fence: uint64(f)}, nil
	}
	vals, _ := reply.([]any)
	var n [4]int64
	for i, v := range vals {
		x, ok := v.(int64)
		if !ok || i >= len(n) {
			return acquireReply{}, fmt.Errorf("unexpected reply %v", reply)
		}
		n[i] = x
	}
	switch {
	case len(vals) >= 2 && n[0] == 0:
		return acquireReply{pttl: n[1], listened: n[2] == 1, counter: n[3], counted: len(vals) == 4}, nil
	case len(vals) == 3 && n[0] == 2 && n[2] > 0:
		return acquireReply{handed: true, fence: uint64(n[1]), pttl: n[2]}, nil
	}
	return acquireReply{}, fmt.Errorf("unexpected reply %v", reply)
}

// remaining turns the acquire script's PTTL into the wait hint: what the
// holder's lock has left (at least 1 ms: PTTL rounds down), LineStale when
// the lock is free but kept for the head of the line (-2: it takes it, or
// drops out of the line by then), and no hint for a lock without expiry.
func remaining(pttl int64) time.Duration {
	switch {
	case pttl >= 0:
		return time.Duration(max(pttl, 1)) * time.Millisecond
	case pttl == -2:
		return LineStale
	}
	return 0
}

// Abandon takes a waiter that gave up out of the line and, when a release
// handed it the lock meanwhile, passes the lock on. It returns the failure
// when it did not reach Redis, and the engine tries it again in the
// background until it does (for up to the waiter's TTL and its keep-place
// bound), so that a waiter that gave up during a fault leaves the line,
// and passes on a lock handed to it, once the fault heals. Until then it
// drops out of the line by itself after LineStale (after LineListened
// while its Locker listens), and when a release hands it the lock before
// then, its Locker, which remembers the waiters that left, also passes
// the lock on when the hand-off notice reaches it (the line's departed
// waiters).
func (t *technique) Abandon(ctx context.Context, a engine.Attempt) error {
	k := protocol.KeysOf(a.Key)
	_, err := redisconn.Eval(ctx, t.pool, t.abandon, k.Lock, k.Fence, k.Line, k.Seen,
		member(a), a.Waiter, protocol.Channel(a.Key))
	return err
}

// member is a waiter's name in the line (protocol.Member).
func member(a engine.Attempt) string {
	return protocol.Member{TTL: a.TTL, Locker: a.Locker, Waiter: a.Waiter}.String()
}

func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	if t.wait.on() {
		return engine.Acquired{}, t.extendReplicated(ctx, h, ttl)
	}
	return engine.Acquired{}, t.owned(redisconn.Eval(ctx, t.pool, t.extend, h.Key, h.Value, ttl.Milliseconds()))
}

// owned turns a compare script's reply into nil (1: done) or ErrNotHeld (0).
func (t *technique) owned(reply any, err error) error {
	n, err := redis.Int(reply, err)
	switch {
	case err != nil:
		return err
	case n == 0:
		return errNotHeld()
	}
	return nil
}

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

package luarelease

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
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
// a Config field is out of range (negative TTL, TTL below 1 ms).
func New(pool strategy.Pool, cfg strategy.Config) (*Locker, error) {
	return newLocker(pool, cfg, FenceRetention)
}

// newLocker is New with fencing counters kept for retention after their
// lock's TTL (tests shorten it).
func newLocker(pool strategy.Pool, cfg strategy.Config, retention time.Duration) (*Locker, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(properties().Name, err)
	}
	t := newTechnique(pool, retention)
	e, err := engine.New(t, properties(), cfg, engine.WithTaggedKeys(), engine.WithInboxNotices(pool), engine.WithLine(LineStale), engine.WithListened(LineListened), engine.WithNoticeWaits())
	if err != nil {
		return nil, err
	}
	t.args.Set(e.Config().TTL, e.ID())
	return &Locker{e: e}, nil
}

func properties() strategy.Properties {
	return strategy.Properties{
		Name:              "lua_release",
		MutualExclusion:   true,
		AtomicAcquire:     true,
		OwnerSafeRelease:  true,
		ClockSafe:         true,
		Fencing:           true,
		AcquireRoundTrips: 1,
		ReleaseRoundTrips: 1,
	}
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

// Properties reports atomic acquire, owner-safe release and clock safety, one
// round trip each way, and no tolerance of node failure.
func (l *Locker) Properties() strategy.Properties { return l.e.Properties() }

var (
	//go:embed acquire.lua
	acquireSource string
	//go:embed release.lua
	releaseSource string
)

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
	consts := constants(retention)
	src := func(s string) string { return s }
	if redisconn.IsSharded(pool) { // a Redis Cluster: notices on shard channels
		src = protocol.Sharded
	}
	return &technique{
		pool:    pool,
		pipe:    redisconn.NewPipeline(pool),
		acquire: redisconn.NewScript(4, src(protocol.Source(consts+acquireSource))),
		abandon: redis.NewScript(4, src(protocol.AbandonSource(consts))),
		release: redisconn.NewScript(4, src(protocol.HandOnSource(consts, releaseSource))),
		extend:  scripts.ComparePExpire(),
	}
}

// constants is the Lua that sets the protocol's constants the acquire,
// release and abandon scripts read (STALE, RECENT, RETENTION, in ms) in front of them:
// a constant in the script's text costs nothing per call, an argument
// costs the client its boxing and Redis its parsing.
func constants(retention time.Duration) string {
	return fmt.Sprintf("local STALE, LISTENED, RECENT, RETENTION = %d, %d, %d, %d\n",
		LineStale.Milliseconds(), LineListened.Milliseconds(), HandOffRecent.Milliseconds(), retention.Milliseconds())
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
}

func (t *technique) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	k := protocol.KeysOf(a.Key)
	args := t.acquire.Args(8)
	args = append(args, k.Lock, k.Fence, k.Line, k.Seen, a.Token, t.args.TTL(a.TTL))
	if a.Waits { // a TryLock joins no line, and sends neither
		args = append(args, t.args.Locker(a.Locker))
		if !waiterOfToken(a.Token, a.Waiter) {
			args = append(args, a.Waiter)
		}
	}
	reply, err := t.acquire.Call(ctx, t.pipe, args)
	if err != nil {
		return engine.Acquired{}, fmt.Errorf("acquire: %w", err)
	}
	if f, ok := reply.(int64); ok && f > 0 { // ours: the fencing token
		return engine.Acquired{Fence: uint64(f), Keys: args[2:6:6]}, nil
	}
	vals, _ := reply.([]any)
	var n [4]int64
	for i, v := range vals {
		x, ok := v.(int64)
		if !ok || i >= len(n) {
			return engine.Acquired{}, fmt.Errorf("acquire: unexpected reply %v", reply)
		}
		n[i] = x
	}
	switch {
	case len(vals) >= 2 && n[0] == 0:
		// A refused Lock's reply also says whether its Locker listens and
		// what the fencing counter was (acquire.lua).
		return engine.Acquired{}, &engine.BusyError{Key: a.Key, Remaining: remaining(n[1]), Listened: n[2] == 1,
			Counter: n[3], Counted: len(vals) == 4}
	case len(vals) == 3 && n[0] == 2 && n[2] > 0:
		// Handed to this waiter by a release: what the lock has left,
		// counted from before this attempt was sent, is a safe validity.
		return engine.Acquired{Value: a.Waiter, Fence: uint64(n[1]), Validity: time.Duration(n[2]) * time.Millisecond, Keys: args[2:6:6]}, nil
	}
	return engine.Acquired{}, fmt.Errorf("acquire: unexpected reply %v", reply)
}

// waiterOfToken reports whether waiter is token's part before its last
// ".", non-empty, as the acquire script finds it when it is not sent (the
// engine's tokens of a Lock call are "<waiter>.<n>", engine.Attempt): an
// argument not sent costs neither the client nor Redis anything.
func waiterOfToken(token, waiter string) bool {
	return waiter != "" && len(token) > len(waiter) && token[len(waiter)] == '.' &&
		token[:len(waiter)] == waiter && !strings.Contains(token[len(waiter)+1:], ".")
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
// the lock on when the hand-off notice reaches it (the engine's departed
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

func (t *technique) Release(ctx context.Context, h engine.Held) error {
	return t.owned(t.release.Call(ctx, t.pipe, t.releaseArgs(h, 0)))
}

// releaseArgs is the release script's argument list for the lock h, with
// room for extra arguments after the owner's token: its keys, as kept at
// acquire (a lock handed off or taken back kept none: derived from its
// key), then the token.
func (t *technique) releaseArgs(h engine.Held, extra int) []any {
	k := h.Keys
	if len(k) != 4 {
		k = protocol.KeysOf(h.Key).All()
	}
	args := append(t.release.Args(5+extra), k...)
	return append(args, h.Value)
}

func (t *technique) Extend(ctx context.Context, h engine.Held, ttl time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, t.owned(redisconn.Eval(ctx, t.pool, t.extend, h.Key, h.Value, ttl.Milliseconds()))
}

// owned turns a compare script's reply into nil (1: done) or ErrNotHeld (0).
func (t *technique) owned(reply any, err error) error {
	n, err := redis.Int(reply, err)
	switch {
	case err != nil:
		return err
	case n == 0:
		return fmt.Errorf("%w: the key is missing or holds another owner's token", strategy.ErrNotHeld)
	}
	return nil
}

package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker runs a Technique under the strategy.Locker contract. It is safe for
// concurrent use.
type Locker struct {
	tech  Technique
	cfg   strategy.Config
	props strategy.Properties
	// line keeps the Lock calls waiting, routes notices and hand-offs to
	// them, and cleans up after them; lineCfg is what the options ask of
	// it, until New builds it.
	line    *line.Line
	lineCfg line.Config
	// lockKey builds a lock's Redis key (WithTaggedKeys); nil means
	// Config.Prefix + key.
	lockKey func(prefix, key string) string
	// noTakeBack: WithoutTakeBack; noAttemptBound: WithoutAttemptBound.
	noTakeBack, noAttemptBound bool
	// honoursReplicas: WithReplicas.
	honoursReplicas bool
}

// Option adds an optional capability to a Locker.
type Option func(*Locker)

// WithNotices makes waiters listen for release notices on pools (the nodes
// the technique releases on): the technique's Release publishes on
// Held.Channel in the same round trip as the delete. The message is empty,
// names the one waiter that should try now (a technique that keeps a line
// of waiters in Redis names its head), or tells a waiter that the release
// handed the lock off to it (protocol.Notice).
func WithNotices(pools ...strategy.Pool) Option {
	return func(l *Locker) { l.lineCfg.Pools = pools }
}

// WithLine is for a technique that keeps a line of waiters in Redis and
// drops a waiter that made no attempt for stale: after a refused attempt,
// Lock waits at most stale/2 before the next, whatever the Retry policy,
// so that a live waiter keeps its place (a waiter dropped from the line
// would hear no notice naming it).
func WithLine(stale time.Duration) Option {
	return func(l *Locker) { l.lineCfg.Stale = stale }
}

// WithListened is WithLine's longer bound for a technique whose line keeps
// the place of a waiter whose Locker listens for notices for listened
// (lua_release: while PUBSUB NUMSUB counts the Locker's subscription on
// the lock's node), and says so in the refusal (BusyError.Listened): such
// a waiter, once it sleeps (WithNoticeWaits), waits at most listened/2
// before its next attempt instead of stale/2. The Locker remembers a
// waiter that left for 2 × listened, since a release can hand
// it the lock that long after.
func WithListened(listened time.Duration) Option {
	return func(l *Locker) { l.lineCfg.Listened = listened }
}

// WithNoticeWaits is for a technique whose every release tells the head
// of its line in Redis, by a hand-off or a notice (lua_release hands the
// lock directly to a head whose Locker listens; redlock's releases notify
// the head on every node), see WithLine and WithInboxNotices, which it
// needs: once a refused waiter's subscription
// is confirmed (notify.Hub.Listening), Lock sleeps until a notice or a
// hand-off reaches it, the holder's remaining TTL runs out, or the line's
// keep-place bound (stale/2) ends, instead of the Retry policy's wait; the
// Retry policy still counts the attempts and says when to give up. The
// timer then only keeps the waiter's place and catches a lost notice, so
// waiting costs Redis one attempt per waiter per stale/2 rather than one
// per backoff.
func WithNoticeWaits() Option {
	return func(l *Locker) { l.lineCfg.NoticeWaits = true }
}

// WithInboxNotices is WithNotices for a technique that sends each notice
// to the one Locker whose waiter it names: waiters listen on their
// Locker's inbox for the key, InboxChannel(key, Attempt.Locker), instead
// of on the key's channel, so a release wakes one Locker rather than every
// Locker that waits for the key.
func WithInboxNotices(pools ...strategy.Pool) Option {
	return func(l *Locker) { l.lineCfg.Pools, l.lineCfg.Inbox = pools, true }
}

// WithTaggedKeys keeps each lock under protocol.LockKey(Config.Prefix, key),
// a key whose Redis Cluster hash tag every key the technique derives from
// it (protocol.KeysOf) shares, instead of Config.Prefix + key.
func WithTaggedKeys() Option {
	return func(l *Locker) { l.lockKey = protocol.LockKey }
}

// WithoutAttemptBound is for a technique that bounds its own calls within
// an attempt (redlock: NodeTimeout per node), so Lock's attempts are not
// bounded by AttemptTimeout.
func WithoutAttemptBound() Option {
	return func(l *Locker) { l.noAttemptBound = true }
}

// WithoutTakeBack is for a technique whose acquire needs no take-back by
// the engine: its release checks no owner, so it could delete another
// holder's lock (getset_timestamp), or it takes back its own failed
// attempts (redlock releases every node that may hold one).
func WithoutTakeBack() Option {
	return func(l *Locker) { l.noTakeBack = true }
}

// New returns a Locker for tech. cfg is checked and completed with
// strategy.Config.WithDefaults; a bad field returns an error wrapping
// strategy.ErrInvalidConfig.
func New(tech Technique, props strategy.Properties, cfg strategy.Config, opts ...Option) (*Locker, error) {
	if tech == nil {
		return nil, fmt.Errorf("%w: nil technique", strategy.ErrInvalidConfig)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, lockerr.New(props.Name, err)
	}
	l := &Locker{tech: tech, cfg: cfg, props: props}
	for _, o := range opts {
		o(l)
	}
	if err := l.checkReplicas(); err != nil {
		return nil, lockerr.New(props.Name, err)
	}
	l.lineCfg.TTL = cfg.TTL
	// A hand-off by a release in Redis did not wait for the replicas: the
	// waiter confirms it with an attempt of its own (WithReplicas).
	l.lineCfg.ConfirmRedisHandOffs = l.replicated()
	if l.line, err = line.New(tech, l.lineCfg); err != nil {
		return nil, lockerr.New(props.Name, err)
	}
	return l, nil
}

// ID returns the name of the Locker in its waiters' inbox channels
// (Attempt.Locker), or "" without WithInboxNotices.
func (l *Locker) ID() string { return l.line.ID() }

// Idle waits until the line's clean-ups in the background (abandons and
// releases of locks handed to waiters that left) have ended, and returns
// nil, or ctx.Err() when ctx ends first.
func (l *Locker) Idle(ctx context.Context) error { return l.line.Idle(ctx) }

// Config returns the Locker's configuration with defaults filled in.
func (l *Locker) Config() strategy.Config { return l.cfg }

// Properties returns the technique's claimed guarantees.
func (l *Locker) Properties() strategy.Properties { return l.props }

// opError is how the engine reports an error to the caller of op on key,
// once with the technique's name: "lockzoo: <name>: <op> "<key>": <err>"
// (lockerr.Error). Techniques return their errors without that prefix.
func (l *Locker) opError(op, key string, err error) error {
	return lockerr.Op(l.props.Name, op, key, err)
}

// Close ends the Locker's release-notice connections and their goroutines
// at once, and returns once they have ended. Lock calls waiting then give
// up with an error wrapping strategy.ErrNotAcquired and strategy.ErrClosed
// (a Lock in the middle of an attempt returns when the attempt does; the
// clean-up of its place in a technique's line still reaches Redis). Later
// TryLock and Lock calls return an error wrapping strategy.ErrClosed
// without touching Redis. A lease's Unlock still releases its lock in Redis
// after Close, so that closing a Locker never strands a lock until its
// TTL; Extend returns an error wrapping strategy.ErrClosed, and the lease
// stays unspent. Clean-ups in the background (the take-back of an attempt
// whose reply was lost, a waiter's Abandon that failed) are not tried
// again after Close, which waits for the tries under way (each within a
// second). Close always returns nil; a second Close does nothing.
//
// A Locker that is never closed leaks nothing either: its notice
// connections end notify.Linger after its last waiter left, and a
// clean-up in the background once it reaches Redis, or after the TTL.
func (l *Locker) Close() error {
	l.line.Close() // clean-ups under way end within a second
	return nil
}

// Closed returns a channel that is closed once Close is called, for a
// technique's background work that must end when its Locker closes.
func (l *Locker) Closed() <-chan struct{} { return l.line.Closed() }

// isClosed reports whether Close was called.
func (l *Locker) isClosed() bool { return l.line.IsClosed() }

// checkOpen returns an error wrapping strategy.ErrClosed for op on key
// after Close, else nil.
func (l *Locker) checkOpen(op, key string) error {
	if l.isClosed() {
		return l.opError(op, key, strategy.ErrClosed)
	}
	return nil
}

// ttlOrDefault resolves Extend's ttl argument.
func (l *Locker) ttlOrDefault(ttl time.Duration) (time.Duration, error) {
	switch {
	case ttl == 0:
		return l.cfg.TTL, nil
	case ttl < strategy.MinTTL:
		return 0, fmt.Errorf("%w: extend ttl %v is below the minimum %v", strategy.ErrInvalidConfig, ttl, strategy.MinTTL)
	}
	return ttl, nil
}

// CheckPool returns an error wrapping strategy.ErrInvalidConfig when pool is
// nil. name is the field or argument to name in the message.
func CheckPool(pool strategy.Pool, name string) error {
	if redisconn.IsNil(pool) {
		return fmt.Errorf("%w: %s is nil", strategy.ErrInvalidConfig, name)
	}
	return nil
}

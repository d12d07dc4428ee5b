package engine

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/notify"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker runs a Technique under the strategy.Locker contract. It is safe for
// concurrent use.
type Locker struct {
	tech  Technique
	cfg   strategy.Config
	props strategy.Properties
	lines *lines      // local waiters, per key
	hub   *notify.Hub // release notices; nil when the technique publishes none
	inbox bool        // WithInboxNotices
	// keepPlace bounds the wait after a refused attempt (WithLine); 0
	// means no bound beyond the Retry policy's.
	keepPlace time.Duration
	// keepListened bounds it instead when the refusal says the line saw
	// the waiter's Locker listening (WithListened); 0 without.
	keepListened time.Duration
	// noticeWaits: WithNoticeWaits.
	noticeWaits bool
	// id names this Locker in its waiters' inbox channels; set when the
	// technique addresses its notices (WithInboxNotices), else "".
	id string
	// lockKey builds a lock's Redis key (WithTaggedKeys); nil means
	// Config.Prefix + key.
	lockKey func(prefix, key string) string
	// noTakeBack: WithoutTakeBack; noAttemptBound: WithoutAttemptBound.
	noTakeBack, noAttemptBound bool
	// honoursReplicas: WithReplicas.
	honoursReplicas bool
	// quorum is tech when it is a QuorumHandOffs, else nil.
	quorum QuorumHandOffs
	// departed: the waiters that gave up while in a line in Redis, for
	// passOn (WithLine).
	departed departed
	// bg counts the clean-ups in the background (takeBack, passOn,
	// abandonLater: cleanUpInBackground); Close stops their retries and
	// waits for them.
	bg sync.WaitGroup

	closeOnce sync.Once
	closed    chan struct{} // closed by Close
}

// Option adds an optional capability to a Locker.
type Option func(*Locker)

// WithNotices makes waiters listen for release notices on pools (the nodes
// the technique releases on): the technique's Release publishes on
// Held.Channel in the same round trip as the delete. The message is empty,
// names the one waiter that should try now (a technique that keeps a line
// of waiters in Redis names its head), or tells a waiter that the release
// handed the lock off to it; see notice.go for the bodies.
func WithNotices(pools ...strategy.Pool) Option {
	return func(l *Locker) {
		l.hub = notify.NewNodeHub(pools, l.onNodeNotice)
	}
}

// WithLine is for a technique that keeps a line of waiters in Redis and
// drops a waiter that made no attempt for stale: after a refused attempt,
// Lock waits at most stale/2 before the next, whatever the Retry policy,
// so that a live waiter keeps its place (a waiter dropped from the line
// would hear no notice naming it).
func WithLine(stale time.Duration) Option {
	return func(l *Locker) { l.keepPlace, l.departed.horizon = stale/2, max(l.departed.horizon, 2*stale) }
}

// WithListened is WithLine's longer bound for a technique whose line keeps
// the place of a waiter whose Locker listens for notices for listened
// (lua_release: while PUBSUB NUMSUB counts the Locker's subscription on
// the lock's node), and says so in the refusal (BusyError.Listened): such
// a waiter, once it sleeps (WithNoticeWaits), waits at most listened/2
// before its next attempt instead of stale/2. The Locker remembers a
// waiter that left for 2 × listened (departed), since a release can hand
// it the lock that long after.
func WithListened(listened time.Duration) Option {
	return func(l *Locker) {
		l.keepListened = listened / 2
		l.departed.horizon = max(l.departed.horizon, 2*listened)
	}
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
	return func(l *Locker) { l.noticeWaits = true }
}

// WithInboxNotices is WithNotices for a technique that sends each notice
// to the one Locker whose waiter it names: waiters listen on their
// Locker's inbox for the key, InboxChannel(key, Attempt.Locker), instead
// of on the key's channel, so a release wakes one Locker rather than every
// Locker that waits for the key.
func WithInboxNotices(pools ...strategy.Pool) Option {
	return func(l *Locker) {
		WithNotices(pools...)(l)
		l.inbox = true
	}
}

// WithTaggedKeys keeps each lock under protocol.LockKey(Config.Prefix, key),
// a key whose Redis Cluster hash tag every key the technique derives from
// it (protocol.KeysOf) shares, instead of Config.Prefix + key.
func WithTaggedKeys() Option {
	return func(l *Locker) { l.lockKey = protocol.LockKey }
}

// onNotice routes a notice received on channel to the key's line.
func (l *Locker) onNotice(channel, body string) {
	rkey, ok := protocol.LockOf(channel)
	if !ok {
		return
	}
	if name, fence, lost := l.lines.onNotice(rkey, body); lost {
		l.lostHandOff(rkey, name, fence)
	}
}

// rkey returns the Redis key of the lock the caller names key.
func (l *Locker) rkey(key string) string {
	if l.lockKey != nil {
		return l.lockKey(l.cfg.Prefix, key)
	}
	return l.cfg.Prefix + key
}

// channel returns the channel this Locker's waiters for rkey listen on.
func (l *Locker) channel(rkey string) string {
	if l.id != "" {
		return InboxChannel(rkey, l.id)
	}
	return ReleaseChannel(rkey)
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
	l := &Locker{tech: tech, cfg: cfg, props: props, lines: newLines(), closed: make(chan struct{})}
	for _, o := range opts {
		o(l)
	}
	l.quorum, _ = tech.(QuorumHandOffs)
	if err := l.checkReplicas(); err != nil {
		return nil, lockerr.New(props.Name, err)
	}
	if l.inbox {
		id, err := uuid.NewRandom()
		if err != nil {
			return nil, lockerr.New(props.Name, fmt.Errorf("inbox name: %w", err))
		}
		l.id = id.String()
	}
	return l, nil
}

// ID returns the name of the Locker in its waiters' inbox channels
// (Attempt.Locker), or "" without WithInboxNotices.
func (l *Locker) ID() string { return l.id }

// Config returns the Locker's configuration with defaults filled in.
func (l *Locker) Config() strategy.Config { return l.cfg }

// Properties returns the technique's claimed guarantees.
func (l *Locker) Properties() strategy.Properties { return l.props }

// TryLock makes one attempt to acquire key; see strategy.Locker.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.checkKey("trylock", key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // an ended ctx takes no connection
		return nil, l.opError("trylock", key, err)
	}
	token, err := l.token()
	if err != nil {
		return nil, l.opError("trylock", key, err)
	}
	now := time.Now()
	lease, err := l.attempt(ctx, key, Attempt{Key: l.rkey(key), Token: token, Waiter: token, TTL: l.cfg.TTL, Arrived: now}, now)
	if l.cfg.Observer != nil {
		l.observeTry(ctx, key, now, lease, err)
	}
	if err != nil {
		return nil, l.opError("trylock", key, err)
	}
	return lease, nil
}

// checkKey rejects the call op that must not reach Redis: an empty key
// (strategy.ErrInvalidConfig), or any call after Close
// (strategy.ErrClosed).
func (l *Locker) checkKey(op, key string) error {
	if key == "" {
		return l.opError(op, key, fmt.Errorf("%w: empty key", strategy.ErrInvalidConfig))
	}
	if l.isClosed() {
		return l.opError(op, key, strategy.ErrClosed)
	}
	return nil
}

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
	l.closeOnce.Do(func() {
		close(l.closed)
		if l.hub != nil {
			l.hub.Close()
		}
	})
	l.bg.Wait() // clean-ups under way end within cleanupTimeout
	return nil
}

// Closed returns a channel that is closed once Close is called, for a
// technique's background work that must end when its Locker closes.
func (l *Locker) Closed() <-chan struct{} { return l.closed }

// isClosed reports whether Close was called.
func (l *Locker) isClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// checkOpen returns an error wrapping strategy.ErrClosed for op on key
// after Close, else nil.
func (l *Locker) checkOpen(op, key string) error {
	if l.isClosed() {
		return l.opError(op, key, strategy.ErrClosed)
	}
	return nil
}

// attempt makes one acquire attempt, sent at start, and wraps a success in
// a Lease. A ctx that has already ended returns its error before the
// technique is called, so nothing is sent. An attempt of Lock (a.Waits) is
// bounded by AttemptTimeout too. When the attempt fails in a way that may
// still have written its token (outcomeUnknown), it is taken back
// (takeBack).
func (l *Locker) attempt(ctx context.Context, key string, a Attempt, start time.Time) (strategy.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acquire: %w", err)
	}
	if a.Waits && !l.noAttemptBound {
		bounded := boundAttempt(ctx, a.TTL, l.replicaWait())
		defer bounded.Cancel()
		ctx = bounded
	}
	g, err := l.tech.Acquire(ctx, a)
	if err != nil {
		if outcomeUnknown(err) {
			l.takeBack(a)
		}
		return nil, err
	}
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, err
	}
	return newLease(l, key, a.Key, a.Token, start, g), nil
}

// attemptToken returns the owner token of attempt number n (from 1) of the
// Lock call named waiter: waiter + "." + n. The waiter's name is unique
// (see token), so every attempt's token is too.
func (l *Locker) attemptToken(waiter string, n int) (string, error) {
	return waiter + "." + strconv.Itoa(n), nil
}

// token returns a new name for a TryLock or Lock call, unique whatever
// Config.Token returns: a random UUIDv4 without a Config.Token, else
// Config.Token's value + "." + 26 random characters (crypto/rand.Text, 128
// bits), so that two Lockers whose Token returns the same string (a host
// name) never write the same value, and a technique that compares a lock's
// value with a waiter's name never mistakes one caller for another.
func (l *Locker) token() (string, error) {
	if l.cfg.Token != nil {
		t := l.cfg.Token()
		if t == "" {
			return "", fmt.Errorf("%w: Token returned an empty string", strategy.ErrInvalidConfig)
		}
		return t + "." + rand.Text(), nil
	}
	return newUUID(), nil
}

// newUUID returns a random (version 4) UUID in its string form. It fills
// the UUID with crypto/rand.Read, whose buffer stays on the stack, where
// uuid.NewRandom's reader puts it on the heap: one allocation, the
// string, on every Lock and TryLock.
func newUUID() string {
	var u uuid.UUID
	rand.Read(u[:])             // never fails (crypto/rand, Go 1.24+)
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // the RFC 4122 variant
	return u.String()
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

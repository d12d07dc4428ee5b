package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lockzoo/lockzoo/internal/fault"
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
	// id names this Locker in its waiters' inbox channels; set when the
	// technique addresses its notices (WithInboxNotices), else "".
	id string
	// lockKey builds a lock's Redis key (WithTaggedKeys); nil means
	// Config.Prefix + key.
	lockKey func(prefix, key string) string
	// noTakeBack: WithoutTakeBack.
	noTakeBack bool
	// bg counts the take-backs in flight (takeBack).
	bg sync.WaitGroup
}

// Option adds an optional capability to a Locker.
type Option func(*Locker)

// WithNotices makes waiters listen for release notices on pools (the nodes
// the technique releases on): the technique's Release publishes on
// Held.Channel in the same round trip as the delete. The message is empty,
// names the one waiter that should try now (a technique that keeps a line
// of waiters in Redis names its head), or tells a waiter that the release
// handed the lock to it; see notice.go for the bodies.
func WithNotices(pools ...strategy.Pool) Option {
	return func(l *Locker) {
		l.hub = notify.NewHub(pools, l.onNotice)
	}
}

// WithLine is for a technique that keeps a line of waiters in Redis and
// drops a waiter that made no attempt for stale: after a refused attempt,
// Lock waits at most stale/2 before the next, whatever the Retry policy,
// so that a live waiter keeps its place (a waiter dropped from the line
// would hear no notice naming it).
func WithLine(stale time.Duration) Option {
	return func(l *Locker) { l.keepPlace = stale / 2 }
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
	if rkey, ok := protocol.LockOf(channel); ok {
		l.lines.onNotice(rkey, body)
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
		return nil, fmt.Errorf("lockzoo: %s: %w", props.Name, err)
	}
	l := &Locker{tech: tech, cfg: cfg, props: props, lines: newLines()}
	for _, o := range opts {
		o(l)
	}
	if l.inbox {
		id, err := uuid.NewRandom()
		if err != nil {
			return nil, fmt.Errorf("lockzoo: %s: inbox name: %w", props.Name, err)
		}
		l.id = id.String()
	}
	return l, nil
}

// Config returns the Locker's configuration with defaults filled in.
func (l *Locker) Config() strategy.Config { return l.cfg }

// Properties returns the technique's claimed guarantees.
func (l *Locker) Properties() strategy.Properties { return l.props }

// TryLock makes one attempt to acquire key; see strategy.Locker.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // an ended ctx takes no connection
		return nil, fmt.Errorf("lockzoo: %s: trylock %q: %w", l.props.Name, key, err)
	}
	token, err := l.token()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return l.attempt(ctx, key, Attempt{Key: l.rkey(key), Token: token, Waiter: token, TTL: l.cfg.TTL, Arrived: now}, now)
}

// Lock retries TryLock under the Config's Retry policy until it holds key or
// ctx ends; see strategy.Locker. A Redis failure is retried like a held
// lock; an invalid key or an injected crash returns at once.
//
// Waiting: this Locker's goroutines that wait for the same key queue in
// FIFO order and only the first contends in Redis. It retries when a release
// notice arrives (a local Unlock, or a pub/sub notice where the technique
// publishes one), when the Retry policy's wait ends, or, where the technique
// reports the holder's remaining TTL, when that runs out, whichever comes
// first. It returns without another attempt when the lock is handed to it:
// by a release in Redis (a "grant:" notice), or by a local Unlock that
// passed the lock on (Passer).
func (l *Locker) Lock(ctx context.Context, key string) (_ strategy.Lease, err error) {
	if err := l.checkKey(key); err != nil {
		return nil, err
	}
	waiter, err := l.token() // names this call in lines and notices
	if err != nil {
		return nil, err
	}
	rkey := l.rkey(key)
	a := Attempt{Key: rkey, Waiter: waiter, TTL: l.cfg.TTL, Waits: true, Locker: l.id, Arrived: time.Now()}
	w := l.lines.join(rkey, waiter, a)
	defer func() {
		l.leave(rkey, w)
		if err != nil {
			l.unclaimed(ctx, rkey, w)
		}
	}()
	select {
	case <-w.turn:
	case <-ctx.Done():
		return nil, l.gaveUp(key, ctx.Err(), nil)
	}

	var lastFailure error // the last error that was not "held by someone else"
	var timer *time.Timer
	queued := false // an attempt was refused, so the technique may have queued us
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if queued {
			l.abandon(ctx, a)
		}
	}()
	var refusedAt time.Time // when the last refused attempt was sent
	for attempt := 1; ; attempt++ {
		select {
		case h := <-w.grant:
			queued = false // the hand-off took us out of the line
			return l.handed(ctx, key, a, refusedAt, h)
		default:
		}
		select { // a poke from before this attempt is stale
		case <-w.poke:
		default:
		}
		// A token of its own for every attempt, so that clean-up of an
		// earlier attempt's late writes can never touch this one's.
		if a.Token, err = l.attemptToken(waiter, attempt); err != nil {
			return nil, err
		}
		sent := time.Now()
		lease, err := l.attempt(ctx, key, a, sent)
		if err == nil {
			queued = false // the technique took us out of its line
			return lease, nil
		}
		if errors.Is(err, strategy.ErrNotAcquired) {
			queued = true
			refusedAt = sent
		}
		if errors.Is(err, fault.ErrCrashed) {
			queued = false // a client that died leaves its line entry to go stale
			return nil, err
		}
		if errors.Is(err, strategy.ErrInvalidConfig) {
			return nil, err
		}
		// Keep the last real failure: an attempt cut short by ctx says only
		// that ctx ended, which the final error reports anyway.
		cutShort := ctx.Err() != nil && errors.Is(err, ctx.Err())
		if !errors.Is(err, strategy.ErrNotAcquired) && (!cutShort || lastFailure == nil) {
			lastFailure = err
		}
		if ctx.Err() != nil {
			return nil, l.gaveUp(key, ctx.Err(), lastFailure)
		}
		if l.subscribe(ctx, rkey) {
			continue // subscribed just now: a release may have slipped in between
		}
		wait, ok := l.cfg.Retry.Backoff(attempt)
		if !ok {
			return nil, l.gaveUp(key, nil, lastFailure)
		}
		var busy *BusyError
		if errors.As(err, &busy) && busy.Remaining > 0 {
			wait = min(wait, busy.Remaining)
		}
		if l.keepPlace > 0 && errors.Is(err, strategy.ErrNotAcquired) {
			wait = min(wait, l.keepPlace)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-w.poke:
			timer.Stop() // Go 1.23+: no stale tick survives Stop, Reset is safe
		case h := <-w.grant:
			queued = false // the hand-off took us out of the line
			return l.handed(ctx, key, a, refusedAt, h)
		case <-ctx.Done():
			return nil, l.gaveUp(key, ctx.Err(), lastFailure)
		}
	}
}

// subscribeBound caps how long a waiter waits for its subscription to be
// confirmed before it relies on its timer alone.
const subscribeBound = 50 * time.Millisecond

// subscribe makes sure rkey's line listens for release notices; it reports
// whether it subscribed just now (after waiting, within subscribeBound and
// ctx, for the confirmation), in which case a notice may have been missed
// before. A subscription that was still confirmed from an earlier wait
// (see notify.Linger) missed nothing.
func (l *Locker) subscribe(ctx context.Context, rkey string) bool {
	if l.hub == nil || !l.lines.markSubscribed(rkey) {
		return false
	}
	confirmed := l.hub.Subscribe(l.channel(rkey))
	select {
	case <-confirmed:
		return false
	default:
	}
	t := time.NewTimer(subscribeBound)
	defer t.Stop()
	select {
	case <-confirmed:
	case <-t.C:
	case <-ctx.Done():
	}
	return true
}

// leave takes w out of rkey's line and drops the line's subscription when
// it was the last.
func (l *Locker) leave(rkey string, w *waiter) {
	if l.lines.leave(rkey, w) && l.hub != nil {
		l.hub.Unsubscribe(l.channel(rkey))
	}
}

// gaveUp builds Lock's final error: it wraps ErrNotAcquired, the context's
// error when there is one, and the last Redis failure when there was one.
func (l *Locker) gaveUp(key string, ctxErr, lastFailure error) error {
	switch {
	case ctxErr != nil && lastFailure != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: %w (last failure: %w)", l.props.Name, key, strategy.ErrNotAcquired, ctxErr, lastFailure)
	case ctxErr != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: %w", l.props.Name, key, strategy.ErrNotAcquired, ctxErr)
	case lastFailure != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: retries exhausted (last failure: %w)", l.props.Name, key, strategy.ErrNotAcquired, lastFailure)
	default:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: retries exhausted", l.props.Name, key, strategy.ErrNotAcquired)
	}
}

func (l *Locker) checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("lockzoo: %s: %w: empty key", l.props.Name, strategy.ErrInvalidConfig)
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
		return nil, fmt.Errorf("lockzoo: %s: acquire %q: %w", l.props.Name, key, err)
	}
	if a.Waits {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, AttemptTimeout(a.TTL))
		defer cancel()
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

// handed wraps in a Lease a lock handed to the waiter a. A lock handed by
// a release in Redis (a "grant:" notice) holds a.Waiter; the hand-off came
// after the attempt sent at refusedAt was refused (that attempt found the
// lock not ours), so the validity is counted from then. A lock passed by a
// local Unlock comes with its own start and validity.
func (l *Locker) handed(ctx context.Context, key string, a Attempt, refusedAt time.Time, h handoff) (strategy.Lease, error) {
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, err
	}
	start := h.start
	if start.IsZero() {
		start = refusedAt
	}
	return newLease(l, key, a.Key, h.value, start, Grant{Value: h.value, Fence: h.fence, Validity: h.valid}), nil
}

// unclaimed releases a lock that a local Unlock passed to w (see Passer)
// after w's Lock had already given up, on a fresh context bounded by
// abandonTimeout. A failure is left alone: the lock expires at its TTL.
// (A lock handed by a release in Redis is the technique's to pass on, in
// Abandon.) w has left its line, so nothing more can be passed to it.
func (l *Locker) unclaimed(ctx context.Context, rkey string, w *waiter) {
	select {
	case h := <-w.grant:
		if !h.local {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
		defer cancel()
		_ = l.tech.Release(ctx, Held{Key: rkey, Value: h.value, Fence: h.fence, Channel: ReleaseChannel(rkey)})
	default:
	}
}

// abandonTimeout bounds the clean-up a Lock makes when it gives up.
const abandonTimeout = time.Second

// abandon tells a technique that keeps a line of waiters in Redis that the
// waiter a has given up, on a fresh context (ctx may have ended).
func (l *Locker) abandon(ctx context.Context, a Attempt) {
	ab, ok := l.tech.(Abandoner)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	ab.Abandon(ctx, a)
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
			return "", fmt.Errorf("lockzoo: %s: %w: Token returned an empty string", l.props.Name, strategy.ErrInvalidConfig)
		}
		return t + "." + rand.Text(), nil
	}
	u, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("lockzoo: %s: owner token: %w", l.props.Name, err)
	}
	return u.String(), nil
}

// ttlOrDefault resolves Extend's ttl argument.
func (l *Locker) ttlOrDefault(ttl time.Duration) (time.Duration, error) {
	switch {
	case ttl == 0:
		return l.cfg.TTL, nil
	case ttl < strategy.MinTTL:
		return 0, fmt.Errorf("lockzoo: %s: %w: extend ttl %v is below the minimum %v", l.props.Name, strategy.ErrInvalidConfig, ttl, strategy.MinTTL)
	}
	return ttl, nil
}

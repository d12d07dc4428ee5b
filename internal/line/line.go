package line

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/background"
	"github.com/lockzoo/lockzoo/internal/notify"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// Technique is what a technique plugs into its Locker's line: its
// owner-checked release, which the line uses to pass on a lock handed to
// a waiter that no longer wants it (a technique that keeps a line of
// waiters in Redis hands the lock on to the next one). A technique that
// keeps such a line implements Abandoner too, one that hands a lock to a
// waiter of its own Locker as it releases it, HandOffer, and one whose
// nodes each hand their copy of the lock, Quorum.
type Technique interface {
	// Release deletes the lock h holds, if it still holds h.Value. It
	// returns an error wrapping strategy.ErrNotHeld when it does not.
	Release(ctx context.Context, h Held) error
}

// Abandoner is implemented by techniques that keep a line of waiters in
// Redis: a Lock call that gives up after one or more attempts Abandons
// (Line.Leave), so that the waiter a.Waiter leaves the line at once
// rather than when it goes stale, and passes on a lock a release handed
// to it. Abandon returns the failure when it did not reach Redis: the
// line then tries it again in the background until it does
// (abandonLater), so it must be harmless to repeat. A technique that
// keeps its lines itself returns nil.
type Abandoner interface {
	Abandon(ctx context.Context, a Attempt) error
}

// Config is what a Locker's line is built with (the engine's options).
type Config struct {
	// Pools are the nodes release notices come from (one pub/sub
	// connection each); none: no notices, the waiters poll.
	Pools []strategy.Pool
	// Inbox: each notice goes to the one Locker whose waiter it names, on
	// protocol.Inbox(key, ID()), rather than to protocol.Channel(key).
	Inbox bool
	// Stale: the technique keeps a line of waiters in Redis and drops a
	// waiter unseen for Stale; 0 for none.
	Stale time.Duration
	// Listened: the line in Redis keeps a waiter whose Locker listens for
	// Listened (see KeepPlace).
	Listened time.Duration
	// NoticeWaits: every release tells the head of the line in Redis (see
	// KeepPlace).
	NoticeWaits bool
	// TTL is the Locker's: a lock handed to a waiter that left expires
	// within it.
	TTL time.Duration
	// ConfirmRedisHandOffs: a lock handed off by a release in Redis (a
	// "handoff:" notice, not a local Unlock's nor a quorum's) is not taken
	// as it is; the waiter attempts instead, which finds the lock in its
	// name (the technique's replicas must acknowledge it first).
	ConfirmRedisHandOffs bool
}

// Line is one Locker's wait protocol, Go half: per key, the FIFO of its
// waiting Lock calls (only the head contends in Redis), the routing of
// release notices and hand-offs to them, hand-offs by a local Unlock, the
// waiters that left (departed) and what a waiter that gives up leaves
// behind (Leave). Its Lua half is line.lua and abandon.lua. It is safe
// for concurrent use.
type Line struct {
	tech Technique
	ab   Abandoner // nil: no line in Redis
	// handOffer is tech when it hands locks to local waiters (Release).
	handOffer HandOffer
	quorum    Quorum // nil: one node hands the lock
	q         *lines
	hub       *notify.Hub // nil without notices
	// id names the Locker in its waiters' inbox channels (Config.Inbox),
	// else "".
	id string
	// keepPlace bounds the wait after a refused attempt (Config.Stale/2);
	// keepListened instead when the refusal saw the waiter's Locker
	// listening (Config.Listened/2).
	keepPlace, keepListened time.Duration
	noticeWaits             bool
	ttl                     time.Duration
	confirm                 bool // Config.ConfirmRedisHandOffs
	departed                departed
	// bg counts the clean-ups in the background (cleanUpInBackground);
	// Close stops their retries and waits for them.
	bg        background.Tracker
	closeOnce sync.Once
	closed    chan struct{}
}

// New returns the line of a Locker of tech.
func New(tech Technique, cfg Config) (*Line, error) {
	l := &Line{
		tech: tech, q: newLines(), closed: make(chan struct{}), ttl: cfg.TTL,
		keepPlace: cfg.Stale / 2, keepListened: cfg.Listened / 2, noticeWaits: cfg.NoticeWaits, confirm: cfg.ConfirmRedisHandOffs,
	}
	l.ab, _ = tech.(Abandoner)
	l.handOffer, _ = tech.(HandOffer)
	if l.quorum, _ = tech.(Quorum); l.quorum != nil {
		l.quorum.UseWaiters(l)
	}
	l.departed.horizon = max(2*cfg.Stale, 2*cfg.Listened)
	if cfg.Inbox {
		id, err := uuid.NewRandom()
		if err != nil {
			return nil, fmt.Errorf("inbox name: %w", err)
		}
		l.id = id.String()
	}
	if len(cfg.Pools) > 0 {
		l.hub = notify.NewNodeHub(cfg.Pools, l.OnNotice)
	}
	return l, nil
}

// ID returns the name of the Locker in its waiters' inbox channels
// (Attempt.Locker), or "" without Config.Inbox.
func (l *Line) ID() string { return l.id }

// Closed returns a channel that is closed once Close is called.
func (l *Line) Closed() <-chan struct{} { return l.closed }

// IsClosed reports whether Close was called.
func (l *Line) IsClosed() bool {
	select {
	case <-l.closed:
		return true
	default:
		return false
	}
}

// Close ends the notice connections and their goroutines at once, stops
// the clean-ups' retries, and returns once those under way ended (each
// within cleanupTimeout). A second Close only waits.
func (l *Line) Close() {
	l.closeOnce.Do(func() {
		close(l.closed)
		if l.hub != nil {
			l.hub.Close()
		}
	})
	_ = l.bg.Wait(context.Background())
}

// Waiting returns how many Lock calls wait in the local line of rkey.
func (l *Line) Waiting(rkey string) int { return l.q.len(rkey) }

// channel returns the channel this Locker's waiters for rkey listen on.
func (l *Line) channel(rkey string) string {
	if l.id != "" {
		return protocol.Inbox(rkey, l.id)
	}
	return protocol.Channel(rkey)
}

// subscribeBound caps how long a waiter waits for its subscription to be
// confirmed before it relies on its timer alone.
const subscribeBound = 50 * time.Millisecond

// Subscribe makes sure rkey's line listens for release notices; it
// reports whether it subscribed just now (after waiting, within
// subscribeBound and ctx, for the confirmation), in which case a notice
// may have been missed before and the waiter attempts at once. A
// subscription that was still confirmed from an earlier wait (see
// notify.Linger) missed nothing.
func (l *Line) Subscribe(ctx context.Context, rkey string) bool {
	if l.hub == nil || !l.q.markSubscribed(rkey) {
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
	case <-l.closed:
	}
	return true
}

// Wait bounds wait, the Retry policy's wait after an attempt of rkey's
// waiter: after a refusal, at most the line's keep-place bound, so that
// a live waiter keeps its place in Redis; and, once the waiter listens
// (Config.NoticeWaits), exactly that bound (the longer one when the
// refusal saw its Locker listening: listened), since a notice or a
// hand-off wakes it sooner.
func (l *Line) Wait(rkey string, wait time.Duration, refused, listened bool) time.Duration {
	keep := l.keepPlace
	if refused && l.sleeps(rkey) {
		if listened && l.keepListened > 0 {
			keep = l.keepListened
		}
		wait = keep
	}
	if keep > 0 && refused {
		wait = min(wait, keep)
	}
	return wait
}

// sleeps reports whether a refused waiter for rkey may sleep until a
// notice, the holder's TTL or its keep-place bound (Config.NoticeWaits):
// its line's subscription is confirmed and its connection is up.
func (l *Line) sleeps(rkey string) bool {
	return l.noticeWaits && l.keepPlace > 0 && l.hub != nil && l.hub.Listening(l.channel(rkey))
}

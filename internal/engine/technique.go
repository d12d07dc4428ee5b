package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// Attempt is one acquire attempt, for a Technique to make.
type Attempt struct {
	Key   string        // the Redis key, prefix included
	Token string        // the owner token, new for every attempt
	TTL   time.Duration // the lock lifetime asked for
	// Waiter names the Lock call the attempt belongs to, the same for all
	// its attempts: a technique that keeps a line of waiters in Redis
	// queues it under this name, and release notices name it. It is
	// unique per call whatever Config.Token returns (Config.Token's value
	// + "." + random characters, or a UUIDv4), and every Token of the call
	// is Waiter + "." + a number (".p" + a number for a hand-off, see
	// HandOffer); a TryLock's Token is its Waiter.
	Waiter string
	// Waits is true for Lock's attempts and false for TryLock's: only
	// callers that will wait join a line.
	Waits bool
	// Arrived is when the Lock (or TryLock) call began, the same for all
	// its attempts: a technique may order its line of waiters by it.
	Arrived time.Time
	// Locker names the Locker that makes the attempt, for a technique
	// that sends notices to the waiter's inbox,
	// InboxChannel(Key, Locker) (see WithInboxNotices); "" otherwise.
	Locker string
}

// Acquired is what a successful acquire or extend reports.
type Acquired struct {
	// Value is what the holder wrote to Redis; empty means Attempt.Token.
	Value string
	// Fence is the fencing token, 0 where the technique issues none.
	Fence uint64
	// Validity is how long the lock is safe to use, counted from the moment
	// just before the attempt was sent; zero means the TTL asked for.
	Validity time.Duration
	// Keys is what a technique keeps for its Release and Extend of this
	// lock: its Redis keys as the technique passes them to its scripts,
	// boxed once at acquire (boxing a string allocates). The Lease hands
	// them back in Held.Keys; nil when the technique keeps none.
	Keys []any
}

// Held identifies a lock a lease holds, for Release and Extend.
type Held struct {
	Key   string // the Redis key, prefix included
	Value string // the value the holder wrote (the token, for most techniques)
	Fence uint64
	// Keys is Acquired.Keys of the acquire that took the lock, or nil (a
	// lock handed off, or taken back): the technique then builds its keys
	// from Key.
	Keys []any
}

// Channel is where Release publishes its notice: ReleaseChannel(Key).
func (h Held) Channel() string { return ReleaseChannel(h.Key) }

// Abandoner is implemented by techniques that keep a line of waiters in
// Redis: Lock calls Abandon when it gives up after one or more attempts,
// so that the waiter a.Waiter leaves the line at once rather than when it
// goes stale, and passes on a lock a release handed to it. Abandon
// returns the failure when it did not reach Redis: the engine then tries
// it again in the background until it does (abandonLater), so it must be
// harmless to repeat. A technique that keeps its lines itself returns nil.
type Abandoner interface {
	Abandon(ctx context.Context, a Attempt) error
}

// HandOffer is implemented by techniques that can release a lock and make an
// acquire attempt for another waiter in the same step on each node: Unlock
// uses it when a goroutine of the same Locker waits for the key, which
// hands the lock off to that waiter one round trip sooner.
type HandOffer interface {
	// HandOff releases the lock h holds and makes the attempt next. It
	// returns next's result and attempt error as Acquire does, and the
	// release's outcome as Release does.
	HandOff(ctx context.Context, h Held, next Attempt) (g Acquired, acquired, released error)
}

// ReleaseChannel is the pub/sub channel on which a release of the Redis key
// rkey is announced (protocol.Channel: it starts with the key, so with
// Config.Prefix). The message bodies are protocol.Notice's.
func ReleaseChannel(rkey string) string { return protocol.Channel(rkey) }

// InboxChannel is the pub/sub channel on which the Locker named locker
// hears release notices for the Redis key rkey that name its waiters
// (protocol.Inbox).
func InboxChannel(rkey, locker string) string { return protocol.Inbox(rkey, locker) }

// BusyError is an acquire failure that knows how long the current holder's
// lock has left. It matches strategy.ErrNotAcquired; Lock never waits longer
// than Remaining before its next attempt.
type BusyError struct {
	Key       string
	Remaining time.Duration
	// Listened: the technique's line saw the waiter's Locker listening
	// for notices, so it keeps the waiter's place for the longer bound
	// (WithListened).
	Listened bool
	// Counter is the lock's fencing counter as the refusal found it (-1:
	// none), when Counted: a hand-off by a release in Redis whose fencing
	// token is above it came after this refusal, so its validity may be
	// counted from this attempt's send time (counters only grow).
	Counter int64
	Counted bool
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%q is held for %v more: %v", e.Key, e.Remaining, strategy.ErrNotAcquired)
}

// Unwrap makes errors.Is(err, strategy.ErrNotAcquired) true.
func (e *BusyError) Unwrap() error { return strategy.ErrNotAcquired }

// Technique is the part of a lock that is specific to one technique: its
// Redis commands. Methods are called concurrently.
type Technique interface {
	// Acquire makes one attempt. It returns an error wrapping
	// strategy.ErrNotAcquired when the key is held, fault.ErrCrashed when a
	// fault hook stopped it, and any other error for a Redis failure.
	Acquire(ctx context.Context, a Attempt) (Acquired, error)
	// Release deletes the lock. It returns an error wrapping
	// strategy.ErrNotHeld when the lock is not (or no longer seen as) h's.
	Release(ctx context.Context, h Held) error
	// Extend sets the lock's remaining lifetime to ttl. It returns the new
	// Acquired (Value empty means unchanged), or an error wrapping
	// strategy.ErrNotHeld or strategy.ErrUnsupported.
	Extend(ctx context.Context, h Held, ttl time.Duration) (Acquired, error)
}

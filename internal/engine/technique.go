package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// Attempt is one acquire attempt, for a Technique to make: its key,
// owner token, TTL, and the Lock call it belongs to (line.Attempt, since
// a Lock call's attempts are what the line numbers and queues).
type Attempt = line.Attempt

// Held identifies a lock a lease holds, for Release and Extend
// (line.Held, since the line releases the locks handed to waiters that
// left).
type Held = line.Held

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

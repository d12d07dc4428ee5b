package strategy

import (
	"context"
	"time"
)

// Observer hears what a Locker's calls did with their locks, so that a
// service can log, count or time its locks without wrapping every call.
// Set it in Config.Observer; nil (the default) observes nothing and costs
// nothing.
//
// Every technique reports the same events, from one place in the shared
// engine. Methods are called synchronously, on the goroutine of the call
// that made the event, just before that call returns, with the call's ctx
// (which may have ended: a Lock that gave up on ctx reports that ctx).
// They are called concurrently from the Locker's goroutines, so they must
// be safe for concurrent use; they must be quick (they delay the caller),
// must not block, and must not call Unlock or Extend of the lease the event
// is about (the call in progress holds it: that would deadlock).
//
// Events are small structs passed by value, so fields can be added to them
// without breaking an implementation. Methods may be added to Observer
// too: embed NopObserver and implement only the methods you need, and
// your type keeps compiling when an event is added.
//
// A call that returns before it reaches Redis (bad input such as an empty
// key, a TryLock, Lock or Extend after Close, a TryLock whose ctx had
// already ended, Unlock or Extend of a lease already spent) reports
// nothing, and neither does an Unlock or Extend that failed to reach
// Redis: that lease is not spent and the caller sees the error.
type Observer interface {
	// Acquired reports a TryLock or Lock that got the lock, by its own
	// attempt or by a hand-off (then HandedOff came first).
	Acquired(ctx context.Context, e AcquiredEvent)
	// NotAcquired reports a TryLock that was refused or failed, and a
	// Lock that gave up; e.Reason says why.
	NotAcquired(ctx context.Context, e NotAcquiredEvent)
	// Released reports an Unlock that spent the lease: it released the
	// lock, handed it to a waiter, or found it no longer ours (then Lost
	// came first).
	Released(ctx context.Context, e ReleasedEvent)
	// Extended reports an Extend that succeeded.
	Extended(ctx context.Context, e ExtendedEvent)
	// Lost reports that a holder lost its lock, or may have: Unlock or
	// Extend found it no longer ours, or came after the lease's Deadline.
	Lost(ctx context.Context, e LostEvent)
	// HandedOff reports a Lock that received the lock from a releasing
	// holder without an attempt of its own; Acquired follows, with
	// HandedOff true.
	HandedOff(ctx context.Context, e HandOffEvent)
}

// NopObserver implements Observer and does nothing. Embed it in your own
// observer to implement only the events you need; it keeps your type an
// Observer when events are added.
type NopObserver struct{}

var _ Observer = NopObserver{}

// Acquired does nothing.
func (NopObserver) Acquired(context.Context, AcquiredEvent) {}

// NotAcquired does nothing.
func (NopObserver) NotAcquired(context.Context, NotAcquiredEvent) {}

// Released does nothing.
func (NopObserver) Released(context.Context, ReleasedEvent) {}

// Extended does nothing.
func (NopObserver) Extended(context.Context, ExtendedEvent) {}

// Lost does nothing.
func (NopObserver) Lost(context.Context, LostEvent) {}

// HandedOff does nothing.
func (NopObserver) HandedOff(context.Context, HandOffEvent) {}

// The calls events name in their Op field.
const (
	OpLock    = "lock"
	OpTryLock = "trylock"
	OpUnlock  = "unlock"
	OpExtend  = "extend"
)

// AcquiredEvent is a TryLock or Lock that got the lock.
type AcquiredEvent struct {
	Technique string // Properties.Name, e.g. "lua_release"
	Op        string // OpLock or OpTryLock
	Key       string // as the caller named it (no prefix)
	Token     string // Lease.Token
	Fence     uint64 // Lease.Fence; 0 where the technique issues none
	// Wait is how long the call took, from its start until it held the
	// lock: the wait for the lock, plus the attempts' round trips.
	Wait time.Duration
	// Attempts is how many acquire attempts the call sent to Redis: 1 for
	// TryLock and an uncontended Lock.
	Attempts int
	// HandedOff is true when a releasing holder handed the lock to this
	// Lock (see Observer.HandedOff).
	HandedOff bool
}

// Reason says why a TryLock or Lock did not get the lock.
type Reason uint8

// The reasons NotAcquiredEvent reports.
const (
	// ReasonTaken: someone else holds the lock: TryLock was refused, or
	// Lock's Retry policy stopped after refusals.
	ReasonTaken Reason = iota + 1
	// ReasonUnreachable: Redis failed: TryLock's attempt failed to reach
	// it (or its reply was lost), or Lock's Retry policy stopped after a
	// Redis failure.
	ReasonUnreachable
	// ReasonContext: the call's ctx ended first. For a Lock, a
	// LastFailure that does not match the ctx's error says Redis was
	// failing meanwhile.
	ReasonContext
	// ReasonClosed: the Locker was closed while Lock waited.
	ReasonClosed
)

// String returns "taken", "unreachable", "ctx" or "closed".
func (r Reason) String() string {
	switch r {
	case ReasonTaken:
		return "taken"
	case ReasonUnreachable:
		return "unreachable"
	case ReasonContext:
		return "ctx"
	case ReasonClosed:
		return "closed"
	}
	return "unknown"
}

// NotAcquiredEvent is a TryLock that was refused or failed, or a Lock that
// gave up.
type NotAcquiredEvent struct {
	Technique string
	Op        string // OpLock or OpTryLock
	Key       string
	Reason    Reason
	Wait      time.Duration // from the call's start until it gave up
	Attempts  int           // acquire attempts sent to Redis
	// Err is the error the call returned (it wraps ErrNotAcquired, except
	// for a TryLock that failed to reach Redis).
	Err error
	// LastFailure is the last failure of an attempt that Err reports (and
	// wraps): for a Lock, the last Redis failure it met while it waited,
	// or, when there was none, an attempt that the ctx's end cut short;
	// nil when every attempt was answered. A TryLock's is the attempt's
	// error when Reason is ReasonUnreachable.
	LastFailure error
}

// ReleasedEvent is an Unlock that spent the lease.
type ReleasedEvent struct {
	Technique string
	Key       string
	Token     string
	Fence     uint64
	// Held is the time from just before the acquiring attempt was sent
	// (where Deadline counts from) until the Unlock returned.
	Held time.Duration
	// NotHeld is true when the lock was no longer ours: Unlock returned
	// an error wrapping ErrNotHeld, and Lost was reported first.
	NotHeld bool
	// PassedOn is true when the Unlock handed the lock to a waiter of the
	// same Locker in the same step.
	PassedOn bool
}

// ExtendedEvent is an Extend that succeeded.
type ExtendedEvent struct {
	Technique string
	Key       string
	Token     string // after the Extend (a technique may rewrite it)
	Fence     uint64
	TTL       time.Duration // the lifetime asked for
	Deadline  time.Time     // the lease's new Deadline
	Held      time.Duration // since the lock was acquired, as in ReleasedEvent
}

// LostReason says how a holder found out it lost its lock.
type LostReason uint8

// The reasons LostEvent reports.
const (
	// LostNotHeld: Unlock or Extend found the lock no longer ours (it
	// expired, or another client holds it now) and returned ErrNotHeld.
	LostNotHeld LostReason = iota + 1
	// LostDeadlinePassed: Unlock or Extend succeeded, but came after the
	// lease's Deadline, so the holder worked for a while without the
	// guarantee that it alone held the lock.
	LostDeadlinePassed
)

// String returns "not-held" or "deadline-passed".
func (r LostReason) String() string {
	switch r {
	case LostNotHeld:
		return "not-held"
	case LostDeadlinePassed:
		return "deadline-passed"
	}
	return "unknown"
}

// LostEvent reports a lock its holder lost, or may have lost.
type LostEvent struct {
	Technique string
	Op        string // OpUnlock or OpExtend: the call that found out
	Key       string
	Token     string
	Fence     uint64
	Reason    LostReason
	Held      time.Duration // as in ReleasedEvent, until the call found out
	// Late is how long after the lease's Deadline the call found out; 0
	// when it came before the Deadline.
	Late time.Duration
	Err  error // the call's error: wraps ErrNotHeld for LostNotHeld, else nil
}

// HandOffEvent is a lock handed to a waiting Lock by its releasing holder.
type HandOffEvent struct {
	Technique string
	Key       string
	Token     string
	Fence     uint64
	Wait      time.Duration // from the Lock call's start until the hand-off arrived
	Attempts  int           // acquire attempts the Lock had sent before
	// Local is true when an Unlock of the same Locker handed the lock off
	// (it released the lock and took it for the waiter in one step);
	// false when a release in Redis did, from any client.
	Local bool
}

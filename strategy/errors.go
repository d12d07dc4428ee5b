package strategy

import "errors"

// Sentinel errors. Every error a lockzoo technique returns for one of these
// conditions wraps the matching sentinel, so callers test with errors.Is.
var (
	// ErrNotAcquired reports that the lock is held by someone else: TryLock
	// found it taken, or Lock gave up because its context ended or its Retry
	// policy stopped.
	ErrNotAcquired = errors.New("lockzoo: lock not acquired")

	// ErrNotHeld reports that Unlock or Extend found the lock no longer
	// belongs to this lease: it expired, was released already, or another
	// client holds it now.
	ErrNotHeld = errors.New("lockzoo: lock not held")

	// ErrUnsupported reports an operation the technique cannot perform.
	ErrUnsupported = errors.New("lockzoo: operation not supported by this technique")

	// ErrInvalidConfig reports bad input: a Config field out of range, a nil
	// pool, an empty key. The wrapping error names the field.
	ErrInvalidConfig = errors.New("lockzoo: invalid config")

	// ErrClosed reports a call on a Locker after its Close: TryLock, Lock
	// and a lease's Extend return it without touching Redis, and a Lock
	// that was waiting when Close came gives up with it (and with
	// ErrNotAcquired).
	ErrClosed = errors.New("lockzoo: locker closed")

	// ErrNotReplicated reports that fewer replicas than Config.Replicas
	// acknowledged an acquire, extend or hand-off within
	// Config.ReplicaTimeout (or, with Config.WaitAOF, wrote it to their
	// append-only files). An acquire or hand-off so refused was taken back:
	// no lease was granted, and the lock was released. An Extend so refused
	// leaves the lease's Deadline where it was, and the lease unspent.
	ErrNotReplicated = errors.New("lockzoo: not acknowledged by enough replicas")
)

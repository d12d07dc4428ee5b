package redlock

import (
	"fmt"
	"sync/atomic"
)

// breaker keeps a failing node from tying up a goroutine and a connection
// per request. After a call to the node fails without a reply (a timeout,
// a refused connection), the node is suspect: one call at a time, the
// probe, may go to it, and every other request skips it at once, as if it
// had failed. The first reply from the node clears the suspicion.
//
// Skipping is safe: nothing is sent, so the node holds nothing of ours and
// its vote would not have counted anyway. It bounds the calls in flight to
// a frozen node at one (plus those sent before its first timeout), instead
// of one per request for NodeTimeout.
type breaker struct {
	suspect atomic.Bool
	probing atomic.Bool
	last    atomic.Pointer[error] // the failure that made the node suspect
}

// admit reports whether a call may go to the node now, and whether it is
// the probe (then the caller must pass probe=true to settle).
func (b *breaker) admit() (ok, probe bool) {
	if !b.suspect.Load() {
		return true, false
	}
	if b.probing.CompareAndSwap(false, true) {
		return true, true
	}
	return false, false
}

// settle records the outcome of an admitted call: replied reports that the
// node answered (any reply, error replies included); otherwise err is the
// failure.
func (b *breaker) settle(probe, replied bool, err error) {
	if replied {
		b.suspect.Store(false)
	} else {
		last := err // a copy, so that a call that replied allocates nothing
		b.last.Store(&last)
		b.suspect.Store(true)
	}
	if probe {
		b.probing.Store(false)
	}
}

// skipped returns the error of a request that skipped the node.
func (b *breaker) skipped() error {
	if last := b.last.Load(); last != nil {
		return fmt.Errorf("skipped: the node's last call failed (%w) and a probe call is in flight", *last)
	}
	return fmt.Errorf("skipped: the node's last call failed and a probe call is in flight")
}

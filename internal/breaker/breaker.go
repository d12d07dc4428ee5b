// Package breaker keeps a failing node from tying up a goroutine and a
// connection per request.
package breaker

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Breaker makes a node suspect after a call failed without a reply; until
// the node replies again, one call at a time (the probe) goes to it and
// the others skip it. Its zero value is closed (not suspect).
type Breaker struct {
	suspect atomic.Bool
	probing atomic.Bool
	last    atomic.Pointer[error] // the failure that made the node suspect
}

// Admit reports whether a call may go to the node now, and whether it is
// the probe.
func (b *Breaker) Admit() (ok, probe bool) {
	if !b.suspect.Load() {
		return true, false
	}
	if b.probing.CompareAndSwap(false, true) {
		return true, true
	}
	return false, false
}

// Settle records an admitted call's outcome: replied (an error reply
// included), or failed with err; probe is what Admit said.
func (b *Breaker) Settle(probe, replied bool, err error) {
	if replied {
		b.suspect.Store(false)
	} else {
		last := err // copied only here: a call that replied allocates nothing
		b.last.Store(&last)
		b.suspect.Store(true)
	}
	if probe {
		b.probing.Store(false)
	}
}

// Suspect reports whether the node's last call failed without a reply.
func (b *Breaker) Suspect() bool { return b.suspect.Load() }

// Skipped returns the error of a call that Admit turned away.
func (b *Breaker) Skipped() error {
	if last := b.last.Load(); last != nil {
		return fmt.Errorf("skipped: the node's last call failed (%w) and a probe call is in flight", *last)
	}
	return errors.New("skipped: the node's last call failed and a probe call is in flight")
}

package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/lockerr"
)

// Close ends the Locker's release-notice connections and goroutines: the
// notice connections at once, and then it waits for the background calls
// (see Wait), which end on their own within about twice
// Config.NodeTimeout; it is not cut short, since a background call may be
// the release of a lock a failed attempt took on a node. Lock calls
// waiting give up with an error wrapping strategy.ErrNotAcquired and
// strategy.ErrClosed; later TryLock, Lock and Extend calls return an error
// wrapping strategy.ErrClosed without touching Redis, while a lease's
// Unlock still releases its lock (its background calls, if any, end within
// NodeTimeout; Wait waits for them). It returns nil, or an error wrapping
// context.DeadlineExceeded when background calls are still running
// closeBound after the notice connections ended; a second Close does
// nothing more.
func (l *Locker) Close() error {
	if err := l.e.Close(); err != nil {
		return lockerr.New(name, fmt.Errorf("close: %w", err))
	}
	l.t.closeGrants()
	ctx, cancel := context.WithTimeout(context.Background(), l.closeBound())
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		return lockerr.New(name, fmt.Errorf("close: background calls still running: %w", err))
	}
	return nil
}

// closeBound is how long Close waits for the background calls: twice
// NodeTimeout, the most each takes, and a second for a loaded machine.
func (l *Locker) closeBound() time.Duration { return 2*l.cfg.NodeTimeout + time.Second }

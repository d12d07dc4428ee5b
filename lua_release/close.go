package luarelease

// Close ends the Locker's release-notice connections and goroutines at
// once. Lock calls waiting then give up with an error wrapping
// strategy.ErrNotAcquired and strategy.ErrClosed; later TryLock, Lock and
// Extend calls return an error wrapping strategy.ErrClosed without
// touching Redis, while a lease's Unlock still releases its lock. It
// returns nil; a second Close does nothing. A Locker never closed leaks
// nothing either: its connections end soon after its last waiter left.
func (l *Locker) Close() error { return l.e.Close() }

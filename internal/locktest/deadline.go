package locktest

import (
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// CheckDeadline fails t (Errorf) when lease, returned by a Lock or TryLock
// call that began at start and returned at returned, has a Deadline before
// start or after returned + ttl: a lease's validity can neither begin
// before the call that took it nor outlast the TTL counted from its
// return. A ttl of zero checks the lower bound only.
func CheckDeadline(t testing.TB, lease strategy.Lease, start, returned time.Time, ttl time.Duration) {
	t.Helper()
	d := lease.Deadline()
	if d.Before(start) {
		t.Errorf("lease %q Deadline() = %v, before the call's start %v (want within [start, return + TTL %v])",
			lease.Key(), d, start, ttl)
	}
	if ttl > 0 && d.After(returned.Add(ttl)) {
		t.Errorf("lease %q Deadline() = %v, after the call's return %v + TTL %v (want within [start, return + TTL])",
			lease.Key(), d, returned, ttl)
	}
}

// TTLOf returns l's configured TTL when l reports its Config (the engine's
// Lockers do), else 0.
func TTLOf(l strategy.Locker) time.Duration {
	if c, ok := l.(interface{ Config() strategy.Config }); ok {
		return c.Config().TTL
	}
	return 0
}

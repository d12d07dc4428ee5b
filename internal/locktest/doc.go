// Package locktest is the conformance kit every lockzoo technique's tests
// run against real Redis: the contention test (many goroutines, an exact
// counter, an overlap detector), TryLock on a held key, crash liveness,
// stale release, extend, killed and frozen nodes, bad input, and a
// goroutine-leak check.
//
//	import "github.com/lockzoo/lockzoo/internal/locktest"
//
// It is test support, not part of the public API; the public race-condition
// suite is strategy/strategytest.
package locktest

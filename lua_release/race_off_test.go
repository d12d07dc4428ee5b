//go:build !race

package luarelease_test

// raceAllocs is what the race detector's instrumentation adds to an
// uncontended Lock+Unlock's allocations (TestLockUnlockAllocs): nothing
// without it.
const raceAllocs = 0

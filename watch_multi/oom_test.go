package watchmulti_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
)

// TestUnlockOutOfMemory: under maxmemory with noeviction, Unlock and
// Extend fail with OOM (the command queued in MULTI is refused) and the
// lock stays until its TTL (locktest.OutOfMemoryKeepsLock).
func TestUnlockOutOfMemory(t *testing.T) {
	locktest.OutOfMemoryKeepsLock(t, factory)
}

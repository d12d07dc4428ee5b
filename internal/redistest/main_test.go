package redistest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests and their
// cleanups. It checks once at the end rather than per test because the tests
// run in parallel, and a per-test check would see the others' goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

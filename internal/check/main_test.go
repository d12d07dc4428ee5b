package check

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests and their
// cleanups (once at the end: the tests run in parallel).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

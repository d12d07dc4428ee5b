package sentinel_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests and their
// cleanups: a Pool's listener must end with its Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

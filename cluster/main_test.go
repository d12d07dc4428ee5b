package cluster_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests and their
// cleanups (a Pool's refresher, a subscriber's readers, a Locker's notice
// sessions).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

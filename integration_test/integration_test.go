// Package integration_test runs the race-condition suite (strategytest) on
// every lockzoo technique against real Redis nodes from internal/redistest,
// and fails where a technique's claimed guarantees and what Redis showed
// disagree.
package integration_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

func TestMain(m *testing.M) {
	locktest.VerifyTestMain(m)
}

// TestSuite runs the techniques in parallel, each on nodes of its own: the
// scenarios spend most of their time waiting for TTLs and node restarts.
// lua_release+replicas (techniques.Replicated) runs on a primary with a
// replica, every lease acknowledged by it: its node-fault scenario holds.
func TestSuite(t *testing.T) {
	for _, target := range append(techniques.All(), techniques.Replicated()...) {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			strategytest.Run(t, target)
		})
	}
}

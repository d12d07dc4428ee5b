package peers_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestSuite runs lockzoo's race-condition suite on every peer. A peer is
// a black box to it (lockzoo's fault points are not in the peer's code):
// a claimed property must hold; an unclaimed one's verdict is logged, not
// judged.
func TestSuite(t *testing.T) {
	for _, target := range peers.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			strategytest.Run(t, target)
		})
	}
}

package peers_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestSuite runs lockzoo's race-condition suite on every peer. A peer is
// a black box to it (lockzoo's fault points are not in the peer's code):
// a claimed property must hold; an unclaimed one's verdict is logged, not
// judged. A verdict that is one of peers.Findings is logged as what the
// peer earned. The peers run side by side.
func TestSuite(t *testing.T) {
	noLeaks(t)
	for _, target := range peers.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel() // each peer's runs start their own nodes
			for _, name := range strategytest.ScenarioNames() {
				t.Run(name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					results, err := strategytest.Evaluate(ctx, target, strategytest.Options{Scenarios: []string{name}})
					if err != nil || len(results) != 1 {
						t.Fatalf("Evaluate(%s) = %d results, %v; want 1, nil", name, len(results), err)
					}
					r := results[0]
					t.Log(r.String())
					if r.WhiteBox {
						t.Errorf("%s: WhiteBox = true, want a black-box run on a peer", r.Scenario)
					}
					expected, judged := r.Expected()
					if !judged || expected {
						return
					}
					if why, known := peers.KnownFinding(r); known {
						t.Logf("finding, not a failure: %s", why)
						return
					}
					t.Errorf("%s: %s claimed=%v, verdict %s (%d/%d violations), want holds: %s",
						r.Scenario, r.Property, r.Claimed, r.Verdict, r.Violations, r.Attempts, r.Account)
				})
			}
		})
	}
}

package peers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// finding is a verdict a peer earns that the suite counts as a failure:
// a result about the peer, logged, not a failure of this module.
type finding struct {
	target, scenario string
	account          string // what the Result's Account contains
	why              string
}

// findings lists them.
var findings = []finding{{
	target: peers.RueidislockName, scenario: "mutual-exclusion",
	account: "Lock: lockzoo: rueidislock: lock \"mutex\": lock not acquired: context deadline exceeded",
	why: "rueidislock's WithContext, eight goroutines on one Locker, can miss the wake-up of a release and wait " +
		"with the key free until its context ends; seen under -race, with rueidislock's own API and its default options too",
}}

// TestSuite runs lockzoo's race-condition suite on every peer. A peer is
// a black box to it (lockzoo's fault points are not in the peer's code):
// a claimed property must hold; an unclaimed one's verdict is logged, not
// judged. A verdict listed in findings is logged as what the peer earned.
func TestSuite(t *testing.T) {
	noLeaks(t)
	for _, target := range peers.Targets() {
		t.Run(target.Name, func(t *testing.T) {
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
					for _, f := range findings {
						if f.target == target.Name && f.scenario == name && strings.Contains(r.Account, f.account) {
							t.Logf("finding, not a failure: %s", f.why)
							return
						}
					}
					t.Errorf("%s: %s claimed=%v, verdict %s (%d/%d violations), want holds: %s",
						r.Scenario, r.Property, r.Claimed, r.Verdict, r.Violations, r.Attempts, r.Account)
				})
			}
		})
	}
}

package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// brokenReport is a report in which a technique claims a property that
// its scenario saw violated, and another's scenario could not complete.
func brokenReport() *Report {
	speed := &bench.Speed{Workers: 1, Ops: 10, Wall: time.Second, OpsPerSec: 10}
	return &Report{
		Started:   time.Now(),
		Backend:   "process",
		Scenarios: []string{"mutual-exclusion", "owner-safe-release"},
		Settings:  Settings{Workers: 1, Bench: time.Second, Workload: bench.DefaultWorkload()},
		Raw:       Raw{Speed: speed},
		Techniques: []Technique{
			{Name: "liar", Nodes: 1, Speed: speed, Results: []strategytest.Result{
				{Technique: "liar", Scenario: "mutual-exclusion", Property: "MutualExclusion", Claimed: true, WhiteBox: true, Verdict: strategytest.Holds, Attempts: 200},
				{Technique: "liar", Scenario: "owner-safe-release", Property: "OwnerSafeRelease", Claimed: true, WhiteBox: true, Verdict: strategytest.Violated, Violations: 1, Attempts: 1, Account: "stale DEL removed the new holder's lock"},
			}},
			{Name: "honest", Nodes: 1, Results: []strategytest.Result{
				{Technique: "honest", Scenario: "mutual-exclusion", Property: "MutualExclusion", Claimed: true, WhiteBox: true, Verdict: strategytest.Failed, Account: "setup: no Redis"},
				{Technique: "honest", Scenario: "owner-safe-release", Property: "OwnerSafeRelease", WhiteBox: true, Verdict: strategytest.Violated, Violations: 1, Attempts: 1},
			}},
		},
	}
}

// TestClaimedViolationStandsOut: a claimed property that was violated is
// flagged in the text matrix, listed as a problem (so the exit status is
// 1), and drawn in the HTML with its own class, unlike an unclaimed one.
func TestClaimedViolationStandsOut(t *testing.T) {
	locktest.NoLeaks(t)
	rep := brokenReport()
	var text strings.Builder
	if err := writeText(&text, rep); err != nil {
		t.Fatalf("writeText() = %v", err)
	}
	if !strings.Contains(text.String(), "yes VIOLATED 1/1 !!") {
		t.Errorf("text matrix does not flag the claimed violation:\n%s", text.String())
	}
	if !strings.Contains(text.String(), "no violated 1/1") || strings.Contains(text.String(), "no violated 1/1 !!") {
		t.Errorf("text matrix should show the unclaimed violation plainly:\n%s", text.String())
	}
	if problems := rep.Problems(); len(problems) != 2 {
		t.Errorf("Problems() = %q, want the claimed violation and the failed scenario", problems)
	}

	root := writeParsed(t, rep)
	broken := root.find(hasClass("td", "broken"))
	if len(broken) != 1 || !strings.Contains(broken[0].text.String(), "VIOLATED") || broken[0].attrs["title"] != "stale DEL removed the new holder's lock" {
		t.Errorf("HTML has %d claimed-but-violated cells, want 1 saying VIOLATED with the account as its title", len(broken))
	}
	if n := len(root.find(hasClass("td", "violated"))); n != 1 {
		t.Errorf("HTML has %d plain violated cells, want 1 (the unclaimed one)", n)
	}
	if n := len(root.find(hasClass("td", "failed"))); n != 1 {
		t.Errorf("HTML has %d failed cells, want 1", n)
	}
	if n := len(root.find(hasClass("div", "problems"))); n != 1 {
		t.Errorf("HTML has %d problem lists, want 1", n)
	}
}

// TestNiceScale: chart axes end on round numbers that hold the data.
func TestNiceScale(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		v, top float64
		ticks  int
	}{
		{0, 1, 6}, {0.7, 0.8, 5}, {1, 1, 6}, {1.2, 2, 5}, {22388, 30000, 4}, {616, 800, 5}, {100, 100, 6}, {41, 50, 6},
	}
	for _, tt := range tests {
		top, marks := niceScale(tt.v)
		if top != tt.top || len(marks) != tt.ticks || marks[0] != 0 || marks[len(marks)-1] != top {
			t.Errorf("niceScale(%v) = %v, %v; want top %v with %d ticks from 0", tt.v, top, marks, tt.top, tt.ticks)
		}
	}
}

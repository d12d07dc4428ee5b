package strategytest

import (
	"fmt"
	"time"
)

// Verdict is a scenario's conclusion about one property.
type Verdict string

// The verdicts a scenario can reach.
const (
	Holds         Verdict = "holds"          // no violation observed
	Violated      Verdict = "violated"       // at least one violation observed
	NotApplicable Verdict = "not applicable" // the scenario cannot run here (e.g. needs managed nodes)
	Failed        Verdict = "failed"         // the scenario could not complete (Redis down, setup error)
)

// Result is what one scenario observed on one technique.
type Result struct {
	Technique  string        `json:"technique"`
	Scenario   string        `json:"scenario"`
	Property   string        `json:"property"` // the strategy.Properties field, or "MutualExclusion"/"Liveness"
	Claimed    bool          `json:"claimed"`  // whether the technique claims the property
	WhiteBox   bool          `json:"white_box"`
	Verdict    Verdict       `json:"verdict"`
	Violations int           `json:"violations"`
	Attempts   int           `json:"attempts"`
	Account    string        `json:"account"` // one line: what happened
	Elapsed    time.Duration `json:"elapsed_ns"`
	// Timeline is what the scenario's clients did, for a sequence diagram;
	// nil when the scenario did not run (not applicable, or its setup
	// failed).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Failover is how long a failover kept locking away, in the
	// scenarios that fail a primary over (sentinel-failover); nil
	// elsewhere, and when the scenario did not get that far.
	Failover *Failover `json:"failover,omitempty"`
}

// Failover times a failover from the primary's death.
type Failover struct {
	// Promoted is when every Sentinel named the promoted replica and it
	// answered ROLE as a master.
	Promoted time.Duration `json:"promoted_ns"`
	// Followed, for Lockers that wait for replicas, is when the promoted
	// primary first had as many replicas acknowledging its writes as they
	// wait for (WAIT): no lease can be granted before. Zero otherwise.
	Followed time.Duration `json:"followed_ns,omitempty"`
	// Resumed is when a Lock (of a key no one else locks) first
	// succeeded after the death.
	Resumed time.Duration `json:"resumed_ns"`
}

// ResumeBound is how late after the death locking may resume: the
// promotion (or, for Lockers that wait for replicas, the moment enough
// replicas follow the promoted primary, if later), then as long as the
// promotion took again, at least resumeSlack, to reach the promoted
// primary.
func (f Failover) ResumeBound() time.Duration {
	return max(f.Promoted, f.Followed) + max(resumeSlack, f.Promoted)
}

// resumeSlack is the least time ResumeBound allows after the promotion:
// the 1 s, three times over for a machine three times slower (or
// as loaded) as the one the figures in docs/sentinel.md were taken on.
const resumeSlack = 3 * time.Second

// Expected reports whether the verdict is what the claim predicts: a claimed
// property holds, an unclaimed one is violated. Black-box runs of unclaimed
// properties and scenarios that could not run are not judged (ok is false).
func (r Result) Expected() (expected, judged bool) {
	switch {
	case r.Verdict == NotApplicable:
		return true, false
	case r.Verdict == Failed:
		return false, true
	case r.Claimed:
		return r.Verdict == Holds, true
	case !r.WhiteBox:
		return true, false
	}
	return r.Verdict == Violated, true
}

// String renders the result on one line.
func (r Result) String() string {
	claim := "not claimed"
	if r.Claimed {
		claim = "claimed"
	}
	return fmt.Sprintf("%s/%s: %s %s, %s (%d/%d): %s",
		r.Technique, r.Scenario, r.Property, claim, r.Verdict, r.Violations, r.Attempts, r.Account)
}

// verdict builds a Result's verdict from its counts.
func (r *Result) settle() {
	if r.Verdict != "" {
		return
	}
	if r.Violations > 0 {
		r.Verdict = Violated
	} else {
		r.Verdict = Holds
	}
}

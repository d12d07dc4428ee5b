package peers

import (
	"regexp"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// Finding is a verdict a peer earns that contradicts what the peer claims:
// a result about the peer, reproduced and logged, not a failure of lockzoo.
// The peers module's suite (TestSuite) logs it instead of failing, and
// comparepeers shows it, violated, with its account, marked known, without
// counting it as a problem of the run. It is narrow: one peer, one
// scenario, and what the Result's Account says.
type Finding struct {
	Target, Scenario string
	// Account is a regular expression (regexp syntax) the Result's Account
	// must match.
	Account string
	// Why says what the peer does, in words.
	Why string
}

// Matches reports whether r is this finding: a result of Target on
// Scenario whose verdict contradicts the claim and whose Account matches.
// A pattern that does not compile matches nothing.
func (f Finding) Matches(r strategytest.Result) bool {
	if r.Technique != f.Target || r.Scenario != f.Scenario {
		return false
	}
	if expected, judged := r.Expected(); !judged || expected {
		return false
	}
	re, err := regexp.Compile(f.Account)
	return err == nil && re.MatchString(r.Account)
}

// Findings returns the known findings about the peers.
func Findings() []Finding {
	return []Finding{{
		Target: RueidislockName, Scenario: "mutual-exclusion",
		Account: regexp.QuoteMeta(`Lock: lockzoo: rueidislock: lock "mutex": lock not acquired: context deadline exceeded`),
		Why: "rueidislock's WithContext, eight goroutines on one Locker, can miss the wake-up of a release and wait " +
			"with the key free until its context ends; seen under -race, with rueidislock's own API and its default options too",
	}, {
		// Two holders or a lost update, after replies were swallowed, with
		// every Deadline right: the adapter's Deadline is not at fault.
		Target: RueidislockName, Scenario: "faulty-network",
		Account: `\([1-9][0-9]* swallowed\) on 1 of 1 node\(s\): [0-9]+ sections, [0-9]+ overlaps, [0-9]+ updates lost, 0 bad Deadlines, `,
		Why: "rueidis pipelines every command of a Locker on one connection and hands replies out in order, with nothing " +
			"in a reply to match it to its command; when a reply is lost while the connection stays open, every later reply " +
			"goes to the command before its own, and rueidislock's acquire takes any reply that is not nil or an error " +
			"(another command's OK or integer) as the lock: two holders (TestRueidisShiftsRepliesAfterALostOne)",
	}}
}

// KnownFinding returns why r is a known finding, and whether it is one:
// comparepeers's compare.KnownFinding.
func KnownFinding(r strategytest.Result) (why string, known bool) {
	for _, f := range Findings() {
		if f.Matches(r) {
			return f.Why, true
		}
	}
	return "", false
}

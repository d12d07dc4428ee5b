package compare

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// knownReport is brokenReport with a peer row whose claimed property was
// violated, marked known by a KnownFinding that matches only that row.
func knownReport() *Report {
	rep := brokenReport()
	peer := Technique{Name: "peer", Nodes: 1, Results: []strategytest.Result{
		{Technique: "peer", Scenario: "mutual-exclusion", Property: "MutualExclusion", Claimed: true, Verdict: strategytest.Violated, Violations: 2, Attempts: 9, Account: "2 overlaps after swallowed replies"},
		{Technique: "peer", Scenario: "owner-safe-release", Property: "OwnerSafeRelease", Claimed: true, Verdict: strategytest.Holds, Attempts: 1},
	}}
	rep.Techniques = append(rep.Techniques, peer)
	known := func(r strategytest.Result) (string, bool) {
		return "the peer shifts replies", r.Technique == "peer" && strings.Contains(r.Account, "swallowed")
	}
	for i := range rep.Techniques {
		markKnown(&rep.Techniques[i], known)
	}
	return rep
}

// TestKnownFindingNotAProblem: a known finding about a peer is shown as
// violated with its account and marked known in the text, markdown and
// HTML, and is not among the Problems (so not in the exit status), while
// a lockzoo technique's contradiction still is.
func TestKnownFindingNotAProblem(t *testing.T) {
	locktest.NoLeaks(t)
	rep := knownReport()
	assert.Equal(t, map[string]string{"mutual-exclusion": "the peer shifts replies"}, rep.Techniques[2].Known, "the peer's known findings")
	assert.Nil(t, rep.Techniques[0].Known, "liar's contradiction is not known: the finding names another technique")

	problems := rep.Problems()
	assert.Len(t, problems, 2, "Problems() = %q, want liar's violation and honest's failure, not the peer's known finding", problems)
	for _, p := range problems {
		assert.NotContains(t, p, "peer/", "a known finding listed as a problem")
	}
	known := rep.KnownFindings()
	require.Len(t, known, 1, "KnownFindings()")
	assert.Contains(t, known[0], "2 overlaps after swallowed replies", "the known finding's account")
	assert.Contains(t, known[0], "the peer shifts replies", "why it is known")

	var text strings.Builder
	require.NoError(t, writeText(&text, rep))
	assert.Contains(t, text.String(), "yes VIOLATED 2/9 known", "the peer's cell")
	assert.Contains(t, text.String(), "yes VIOLATED 1/1 !!", "liar's cell")
	assert.Contains(t, text.String(), "KNOWN FINDINGS (1)", "the text's list")
	assert.Contains(t, text.String(), "PROBLEMS (2)", "the text's problems")

	var md strings.Builder
	require.NoError(t, writeMarkdown(&md, rep, Origin{Command: "test", Commit: "x"}))
	assert.Contains(t, md.String(), "## Known findings", "the markdown's section")

	root := writeParsed(t, rep)
	broken := root.find(hasClass("td", "broken"))
	require.Len(t, broken, 2, "claimed-but-violated cells: liar's and the peer's")
	assert.Contains(t, broken[1].text.String(), "known finding", "the peer's cell text")
	assert.Equal(t, "2 overlaps after swallowed replies", broken[1].attrs["title"], "the peer's cell keeps its account")
	assert.Len(t, root.find(hasClass("div", "known")), 1, "HTML lists of known findings")
}

// TestKnownFindingExitStatus: Problems, which sets the exit status, has
// nothing left when the only contradiction is a known finding.
func TestKnownFindingExitStatus(t *testing.T) {
	locktest.NoLeaks(t)
	rep := knownReport()
	rep.Techniques = rep.Techniques[2:]
	assert.Empty(t, rep.Problems(), "Problems() of a run whose only contradiction is known")
	rep.Techniques[0].Known = nil
	markKnown(&rep.Techniques[0], func(strategytest.Result) (string, bool) { return "", false })
	assert.Len(t, rep.Problems(), 1, "Problems() when no finding matches")
}

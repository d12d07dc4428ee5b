package compare

import (
	"fmt"
	"io"
	"slices"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// KnownFinding tells whether r is a known finding about a peer: a verdict
// that contradicts the peer's claims, logged as what the peer earned, not
// as a failure of the run. It returns why, in words, and whether r is one.
// peers.KnownFinding is comparepeers's.
type KnownFinding func(r strategytest.Result) (why string, known bool)

// markKnown records in t.Known, by scenario, why each of t's results that
// contradicts its claims is a known finding, when known says so.
func markKnown(t *Technique, known KnownFinding) {
	if known == nil {
		return
	}
	for _, r := range t.Results {
		if expected, judged := r.Expected(); !judged || expected {
			continue
		}
		if why, ok := known(r); ok {
			if t.Known == nil {
				t.Known = map[string]string{}
			}
			t.Known[r.Scenario] = why
		}
	}
}

// isKnown reports whether t's result for scenario is a known finding.
func (t Technique) isKnown(scenario string) bool {
	_, ok := t.Known[scenario]
	return ok
}

// KnownFindings lists the verdicts that contradict a claim but are known
// findings about a peer, each with its account and why it is known. They
// are shown, not counted among the Problems.
func (rep *Report) KnownFindings() []string {
	var out []string
	for _, t := range rep.Techniques {
		for _, r := range t.Results {
			if why, ok := t.Known[r.Scenario]; ok {
				out = append(out, fmt.Sprintf("%s (known: %s)", r.String(), why))
			}
		}
	}
	return slices.Clip(out)
}

// writeKnown prints the known findings under their heading.
func writeKnown(w io.Writer, rep *Report) {
	known := rep.KnownFindings()
	fmt.Fprintf(w, "KNOWN FINDINGS (%d)  verdicts about peers that contradict their claims, reproduced and logged; not problems of the run\n", len(known))
	for _, k := range known {
		fmt.Fprintf(w, "  %s\n", k)
	}
}

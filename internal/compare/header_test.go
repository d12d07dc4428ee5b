package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestPropertyHeaderNamesSecondScenario: two scenarios of one property get
// columns that read differently; the first keeps the bare property.
func TestPropertyHeaderNamesSecondScenario(t *testing.T) {
	locktest.NoLeaks(t)
	rep := &Report{
		Scenarios: []string{"mutual-exclusion", "fencing", "faulty-network", "unrun"},
		Techniques: []Technique{{Name: "x", Results: []strategytest.Result{
			{Scenario: "mutual-exclusion", Property: "MutualExclusion"},
			{Scenario: "fencing", Property: "Fencing"},
			{Scenario: "faulty-network", Property: "MutualExclusion"},
		}}},
	}
	var got []string
	for _, s := range rep.Scenarios {
		got = append(got, propertyHeader(rep, s))
	}
	assert.Equal(t, []string{"MutualExclusion", "Fencing", "MutualExclusion (faulty-network)", "unrun"}, got)
}

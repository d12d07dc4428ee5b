package chaos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// phases draws n phases of node's schedule.
func phases(seed int64, node int, kinds []Fault, n int) []phase {
	s := newSchedule(seed, node, kinds)
	out := make([]phase, n)
	for i := range out {
		out[i] = s.next()
	}
	return out
}

// TestScheduleSeeded checks that a schedule is a function of the seed and
// the node alone, that its phases last 50-250 ms, and that it draws only
// the kinds it is given.
func TestScheduleSeeded(t *testing.T) {
	const n = 200
	same := func(a, b []phase) bool {
		for i := range a {
			if a[i].name != b[i].name || a[i].lasts != b[i].lasts {
				return false
			}
		}
		return true
	}
	a, b := phases(42, 0, AllFaults(), n), phases(42, 0, AllFaults(), n)
	assert.True(t, same(a, b), "two schedules of seed 42, node 0 differ")
	assert.False(t, same(a, phases(43, 0, AllFaults(), n)), "seeds 42 and 43 gave the same schedule")
	assert.False(t, same(a, phases(42, 1, AllFaults(), n)), "nodes 0 and 1 of seed 42 got the same schedule")

	names := map[string]int{}
	for _, p := range a {
		names[p.name]++
		assert.True(t, p.lasts >= minPhase && p.lasts <= maxPhase, "phase %s lasts %v, want within [%v, %v]", p.name, p.lasts, minPhase, maxPhase)
	}
	for _, want := range []string{"latency 5ms", "latency 30ms", "latency 120ms", "latency 400ms", "cut", "swallow", "swallow one"} {
		assert.Positive(t, names[want], "phase %q never drawn in %d phases: %v", want, n, names)
	}
	for _, p := range phases(7, 0, []Fault{Latency}, n) {
		assert.True(t, strings.HasPrefix(p.name, "latency "), "a latency-only schedule drew %q", p.name)
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		in      string
		want    []Fault
		wantErr bool
	}{
		{in: "", want: AllFaults()},
		{in: "all", want: AllFaults()},
		{in: "latency", want: []Fault{Latency}},
		{in: "latency, cut", want: []Fault{Latency, Cut}},
		{in: "swallow,cut", want: []Fault{Swallow, Cut}},
		{in: "latency,drop", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFaults(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "lockzoo: chaos:")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

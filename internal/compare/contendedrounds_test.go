package compare

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
)

// TestContendedMedians: with rounds, CONTENDED shows each figure's median
// over the rounds that finished, util's least and greatest, and every
// round's overlapping holders added up, so that a median never hides one;
// a round that did not finish is left out of the medians and named in a
// note. Without rounds it shows round 1's figures alone.
func TestContendedMedians(t *testing.T) {
	run := func(util float64, p99 time.Duration, overlaps int) *bench.Contention {
		return &bench.Contention{Lockers: 8, Sections: 200, Utilisation: util, Overlaps: overlaps,
			Wait: bench.Quantiles{P50: p99 - time.Millisecond, P99: p99}, Handoff: bench.Quantiles{P50: 200 * time.Microsecond}}
	}
	const why = "did not finish within 2m0s: lock not acquired"
	tech := Technique{
		Name: "fair", Apart: run(0.82, 13*time.Millisecond, 0), Shared: run(0.90, 10*time.Millisecond, 0),
		ContendedRounds: []ContendedRound{
			{Round: 1, Apart: run(0.82, 13*time.Millisecond, 0), Shared: run(0.90, 10*time.Millisecond, 0)},
			{Round: 2, Apart: run(0.89, 10*time.Millisecond, 1), SharedUnfinished: why},
			{Round: 3, Apart: run(0.87, 11*time.Millisecond, 0), Shared: run(0.86, 12*time.Millisecond, 0)},
		},
	}
	tests := []struct {
		name      string
		rounds    int
		wants     []string // fields of the output, runs of spaces taken as one
		absent    string
		wantsHTML []string
	}{
		{"rounds", 3, []string{
			"median of 3 rounds",
			"fair  87% (82–89)  10  11  0.20  88% (86–90)  10  11  0.20",
			"fair: 1 overlapping holders (lockers 8)",
			"fair: contended shared did not finish within 2m0s (a Lock gave up at the bound) in round 2",
		}, "", []string{"medians of 3 rounds", "87% (82–89)", "in round 2"}},
		{"one run", 0, []string{"fair  82%  12  13  0.20  90%  9.0  10  0.20"}, "median of", []string{"82%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{Settings: Settings{Workload: bench.DefaultWorkload(), Rounds: tt.rounds}, Techniques: []Technique{tech}}
			var b bytes.Buffer
			writeContention(&b, rep)
			out := b.String()
			wantFields(t, "writeContention()", out, tt.wants...)
			if tt.absent != "" && strings.Contains(out, tt.absent) {
				t.Errorf("writeContention() =\n%s\nwant no %q", out, tt.absent)
			}
			html := writeParsed(t, rep).text.String()
			for _, want := range tt.wantsHTML {
				if !strings.Contains(html, want) {
					t.Errorf("HTML report does not say %q", want)
				}
			}
		})
	}
}

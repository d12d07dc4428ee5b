package compare

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/locktest"
)

// spreadCell is a SPEED row's min–max of its per-round ratio to raw.
var spreadCell = regexp.MustCompile(`\(\d+–\d+\)`)

// TestRounds runs a small comparison, one single-node technique and one
// multi-node one, with -rounds 2 and with the default: with rounds the
// JSON holds two samples per technique, round 1's the technique's own
// Speed, round 2's against the ceiling measured right before it (so the
// ceiling has three samples: round 1's and one per technique), each of
// the multi-node technique's with a frozen-node run, and two contended
// rounds per technique, round 1's its contended steps', the
// SPEED table says how its figures were taken and shows every row's
// spread, CONTENDED says so too and shows the spread of each util cell,
// and stderr follows round 2; with the default there are no samples and
// no spreads.
func TestRounds(t *testing.T) {
	tests := []struct {
		rounds  string
		want    int // samples per technique
		wantRaw int // samples of the ceiling
	}{
		{"2", 2, 3},
		{"1", 0, 0},
	}
	for _, tt := range tests {
		t.Run("rounds "+tt.rounds, func(t *testing.T) {
			locktest.NoLeaks(t)
			jsonPath := filepath.Join(t.TempDir(), "report.json")
			code, stdout, stderr := runCommand(t, "-techniques", "lua_release,redlock", "-scenarios", "mutual-exclusion",
				"-bench", "100ms", "-workers", "2", "-contenders", "none", "-rounds", tt.rounds, "-json", jsonPath)
			if code != exitOK {
				t.Fatalf("run() = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)
			}
			rep := readReport(t, jsonPath)
			if got := len(rep.Raw.Rounds); got != tt.wantRaw {
				t.Errorf("raw ceiling has %d round samples, want %d", got, tt.wantRaw)
			}
			for i, tech := range rep.Techniques {
				if got := len(tech.SpeedRounds); got != tt.want {
					t.Errorf("%s has %d round samples, want %d", tech.Name, got, tt.want)
					continue
				}
				for i, r := range tech.SpeedRounds {
					if r.Round != i+1 || r.Speed.OpsPerSec <= 0 || r.RawOpsPerSec <= 0 || r.Cost == nil {
						t.Errorf("%s sample %d = %+v, want round %d with ops/s, the round's raw ops/s and a cost", tech.Name, i, r, i+1)
					}
					if frozen := r.Frozen != nil && r.Frozen.OpsPerSec > 0; frozen != (tech.Nodes > 1) {
						t.Errorf("%s (%d nodes) sample %d has a frozen-node run: %v, want %v (multi-node techniques only)", tech.Name, tech.Nodes, i, frozen, tech.Nodes > 1)
					}
				}
				if tt.want > 0 && (tech.Speed == nil || tech.SpeedRounds[0].Speed != *tech.Speed) {
					t.Errorf("%s round 1 = %+v, want its uncontended step's %+v", tech.Name, tech.SpeedRounds[0].Speed, tech.Speed)
				}
				if tt.want > 1 && len(rep.Raw.Rounds) == tt.wantRaw {
					before := rep.Raw.Rounds[1+i]
					if got := tech.SpeedRounds[1].RawOpsPerSec; before.Round != 2 || got != before.Speed.OpsPerSec {
						t.Errorf("%s round 2 is against a ceiling of %v ops/s, want the one measured right before it: %+v", tech.Name, got, before)
					}
				}
			}
			for _, tech := range rep.Techniques {
				if got := len(tech.ContendedRounds); got != tt.want {
					t.Errorf("%s has %d contended rounds, want %d", tech.Name, got, tt.want)
					continue
				}
				for i, r := range tech.ContendedRounds {
					if r.Round != i+1 || r.Apart == nil || r.Shared == nil || r.Apart.Sections == 0 || r.Shared.Sections == 0 {
						t.Errorf("%s contended round %d = %+v, want round %d with apart and shared sections", tech.Name, i, r, i+1)
					}
				}
				if r := tech.ContendedRounds; tt.want > 0 && r[0].Apart != nil && r[0].Shared != nil {
					assert.Equal(t, tech.Apart, r[0].Apart, "%s contended round 1 apart, want its contended step's", tech.Name)
					assert.Equal(t, tech.Shared, r[0].Shared, "%s contended round 1 shared, want its contended step's", tech.Name)
				}
			}
			contended, _, _ := strings.Cut(textTable(t, stdout, "CONTENDED"), "many contenders") // apart and shared
			for _, tech := range rep.Techniques {
				spreads := spreadCell.FindAllString(strings.Join(tableRows(contended)[tech.Name], " "), -1)
				if want := map[bool]int{true: 2, false: 0}[tt.want > 0]; len(spreads) != want {
					t.Errorf("CONTENDED row %s = %q: util spreads %q, want %d (apart and shared)", tech.Name, tableRows(contended)[tech.Name], spreads, want)
				}
			}
			if strings.Contains(contended, "median of 2 rounds") != (tt.want > 0) {
				t.Errorf("CONTENDED table mentions its rounds: %v, want %v:\n%s", tt.want == 0, tt.want > 0, contended)
			}
			speed := textTable(t, stdout, "SPEED")
			rows := tableRows(speed)
			for _, tech := range rep.Techniques {
				spread := spreadCell.FindString(strings.Join(rows[tech.Name], " "))
				if (spread != "") != (tt.want > 0) {
					t.Errorf("SPEED row %s = %q: spread %q, want one: %v", tech.Name, rows[tech.Name], spread, tt.want > 0)
				}
			}
			rounds := tt.want > 0
			for _, want := range []string{"median of 2 interleaved rounds", "min–max"} {
				if strings.Contains(speed, want) != rounds {
					t.Errorf("SPEED table mentions %q: %v, want %v:\n%s", want, !rounds, rounds, speed)
				}
			}
			if strings.Contains(stderr, "round 2 of 2") != rounds {
				t.Errorf("stderr reports round 2: %v, want %v:\n%s", !rounds, rounds, stderr)
			}
		})
	}
}

// textTable returns the table named name (SPEED, CONTENDED) of
// lockcompare's text output, up to the blank line after it.
func textTable(t *testing.T, out, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\n"+name+" ")
	if !ok {
		t.Fatalf("text output has no %s table:\n%s", name, out)
	}
	table, _, _ := strings.Cut(rest, "\n\n")
	return name + " " + table
}

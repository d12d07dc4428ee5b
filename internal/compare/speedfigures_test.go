package compare

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy"
)

// speedReport is a measured report with a row of each kind: a
// single-node technique, one whose uncontended step failed, and a
// multi-node one measured with a node frozen; without rounds.
func speedReport() *Report {
	speed := func(ops float64, p50, p99 time.Duration) *bench.Speed {
		return &bench.Speed{Workers: 8, Ops: int(ops), Wall: time.Second, OpsPerSec: ops, Pair: bench.Quantiles{P50: p50, P99: p99}}
	}
	ms := time.Millisecond
	props := &strategy.Properties{AcquireRoundTrips: 1, ReleaseRoundTrips: 1}
	return &Report{
		Started:  time.Now(),
		Backend:  "process",
		Settings: Settings{Workers: 8, Bench: time.Second, Workload: bench.DefaultWorkload()},
		Raw: Raw{
			Speed: speed(20000, 400*time.Microsecond, 2*ms), Cost: &Cost{RedisMicrosPerPair: 9.6, AllocsPerPair: 19},
			Runs: []bench.Speed{*speed(18000, 450*time.Microsecond, 3*ms), *speed(20000, 400*time.Microsecond, 2*ms)},
		},
		Techniques: []Technique{
			{Name: "lua_release", Nodes: 1, Properties: props, Speed: speed(15000, 500*time.Microsecond, 4*ms),
				Cost: &Cost{RedisMicrosPerPair: 30, AllocsPerPair: 57}, Trips: &bench.Trips{Acquire: 1, Release: 1}},
			{Name: "broken", Nodes: 1, Errors: []string{"uncontended: no Redis"}},
			{Name: "redlock", Nodes: 5, Properties: props, Speed: speed(1000, 10*ms, 105*ms),
				Cost: &Cost{RedisMicrosPerPair: 559.8, AllocsPerPair: 257}, Trips: &bench.Trips{Acquire: 1.14, Release: 1.14},
				Frozen: speed(500, 12*ms, 900*ms)},
		},
	}
}

// oneRoundSpeed is what writeSpeed and writeRedlock printed of
// speedReport before -rounds: the default must print it still.
const oneRoundSpeed = `SPEED  uncontended: 8 workers, each on its own key, Lock+Unlock for 1s; times in ms; round trips per Lock + Unlock
       raw: the ceiling, measured at the start and at the end of the run (18000, 20000 ops/s); the faster is shown
       redis µs: Redis CPU per pair, the nodes' main-thread CPU time (INFO cpu); allocs: heap allocations per pair in this process, the loop's own included
technique                nodes  ops/s  of raw  pair p50  pair p99  redis µs  allocs  round trips  claimed
raw SET NX PX + EVALSHA  1      20000  100%    0.40      2.0       9.6       19      1+1          1+1
lua_release              1      15000  75%     0.50      4.0       30.0      57      1+1          1+1
broken                   1      -      -       -         -         -         -       -            -
redlock                  5      1000   5%      10        105       559.8     257     1.14+1.14    1+1
REDLOCK  multi-node techniques: uncontended ops/s healthy (as in SPEED) and with the last node frozen (each call bounded by 1s), and contended apart
technique  nodes  healthy ops/s  frozen ops/s  frozen/healthy  frozen pair p99  apart util  apart wait p99
redlock    5      1000           500           0.50            900              -           -
`

// rawFailedSpeed is the same with the ceiling failed.
const rawFailedSpeed = `SPEED  uncontended: 8 workers, each on its own key, Lock+Unlock for 1s; times in ms; round trips per Lock + Unlock
       raw: the ceiling, measured at the start and at the end of the run (none ops/s); the faster is shown
       redis µs: Redis CPU per pair, the nodes' main-thread CPU time (INFO cpu); allocs: heap allocations per pair in this process, the loop's own included
technique                nodes  ops/s   of raw  pair p50  pair p99  redis µs  allocs  round trips  claimed
raw SET NX PX + EVALSHA  1      failed
lua_release              1      15000   -       0.50      4.0       30.0      57      1+1          1+1
broken                   1      -       -       -         -         -         -       -            -
redlock                  5      1000    -       10        105       559.8     257     1.14+1.14    1+1
REDLOCK  multi-node techniques: uncontended ops/s healthy (as in SPEED) and with the last node frozen (each call bounded by 1s), and contended apart
technique  nodes  healthy ops/s  frozen ops/s  frozen/healthy  frozen pair p99  apart util  apart wait p99
redlock    5      1000           500           0.50            900              -           -
`

// speedTables renders rep's SPEED and REDLOCK tables, trailing spaces
// dropped as writeText drops them.
func speedTables(t *testing.T, rep *Report) string {
	t.Helper()
	var b strings.Builder
	writeSpeed(&b, rep)
	writeRedlock(&b, rep)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// TestSpeedTableOneRound: without rounds, SPEED and REDLOCK print what they
// printed before -rounds existed, byte for byte.
func TestSpeedTableOneRound(t *testing.T) {
	locktest.NoLeaks(t)
	rawFailed := speedReport()
	rawFailed.Raw = Raw{Error: "no Redis"}
	tests := []struct {
		name string
		rep  *Report
		want string
	}{
		{"measured", speedReport(), oneRoundSpeed},
		{"raw failed", rawFailed, rawFailedSpeed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := speedTables(t, tt.rep); got != tt.want {
				t.Errorf("SPEED and REDLOCK tables:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// roundsReport is speedReport measured in 3 rounds: lua_release at 75%,
// 72% and 81% of the ceilings of its rounds, broken never, and redlock in
// two rounds, one of them without a ceiling.
func roundsReport() *Report {
	rep := speedReport()
	rep.Settings.Rounds = 3
	sample := func(round int, ops, raw float64, us float64) RoundSpeed {
		return RoundSpeed{Round: round, RawOpsPerSec: raw, Cost: &Cost{RedisMicrosPerPair: us, AllocsPerPair: 2 * us},
			Speed: bench.Speed{OpsPerSec: ops, Pair: bench.Quantiles{P50: time.Duration(100*us) * time.Microsecond, P99: time.Duration(us) * time.Millisecond}}}
	}
	rep.Raw.Rounds = []RoundSpeed{sample(1, 20000, 20000, 9), sample(2, 10000, 10000, 11), sample(3, 16000, 16000, 10)}
	rep.Techniques[0].SpeedRounds = []RoundSpeed{sample(1, 15000, 20000, 30), sample(2, 7200, 10000, 32), sample(3, 12960, 16000, 31)}
	rep.Techniques[1].Errors = append(rep.Techniques[1].Errors, "round 2: build: no Redis", "round 3: build: no Redis")
	rep.Techniques[2].SpeedRounds = []RoundSpeed{sample(1, 1000, 20000, 500), sample(3, 800, 0, 600)}
	return rep
}

// TestSpeedTableRounds: with rounds, each row shows the medians over its
// rounds, its share of raw is the median of the per-round ratios with
// their min–max in a column of their own, and the header says so; a row
// without rounds shows dashes, a round without a ceiling counts for the
// ops/s and not for the ratio, and REDLOCK's healthy figure is SPEED's, while its frozen/healthy
// compares the frozen run with the healthy run just before it.
func TestSpeedTableRounds(t *testing.T) {
	locktest.NoLeaks(t)
	rep := roundsReport()
	out := speedTables(t, rep)
	for _, want := range []string{roundsNote(rep.Settings), "(18000, 20000 ops/s; the faster is round 1's) and before each row in every further round (10000, 16000)", "of raw  min–max  pair p50"} {
		if !strings.Contains(out, want) {
			t.Errorf("SPEED table lacks %q:\n%s", want, out)
		}
	}
	speed, redlock, _ := strings.Cut(out, "REDLOCK")
	rows := tableRows(speed)
	tests := []struct {
		row  string
		want []string // the cells from nodes to allocs
	}{
		{RawName, []string{"1", "16000", "100%", "1.0", "10", "10.0", "20"}},
		{"lua_release", []string{"1", "12960", "75%", "(72–81)", "3.1", "31", "31.0", "62"}},
		{"broken", []string{"1", "-", "-", "-", "-", "-", "-"}},
		{"redlock", []string{"5", "900", "5%", "(5–5)", "55", "550", "550.0", "1100"}},
	}
	for _, tt := range tests {
		t.Run(tt.row, func(t *testing.T) {
			got := rows[tt.row]
			if len(got) < len(tt.want) || strings.Join(got[:len(tt.want)], " ") != strings.Join(tt.want, " ") {
				t.Errorf("SPEED row %s = %q, want it to start %q", tt.row, got, tt.want)
			}
		})
	}
	if got := tableRows(redlock)["redlock"]; len(got) < 4 || got[1] != "900" || got[3] != "0.50" {
		t.Errorf("REDLOCK row redlock = %q, want healthy ops/s 900, the median SPEED shows, and frozen/healthy 0.50, "+
			"the frozen run (500) over the healthy run just before it on the same nodes (round 1: 1000), not over the median", got)
	}
	if !strings.Contains(redlock, "frozen/healthy: against the healthy run on the same nodes just before the frozen one") {
		t.Errorf("REDLOCK header does not say what frozen/healthy is measured against:\n%s", redlock)
	}

	root := writeParsed(t, rep)
	var spread []string
	for _, tr := range root.find(named("tr")) {
		if cells := tr.find(named("td")); len(cells) > 4 && cells[0].text.String() == "lua_release" {
			spread = append(spread, cells[4].text.String())
		}
	}
	if len(spread) == 0 || spread[0] != "(72–81)" {
		t.Errorf("HTML speed row lua_release has spread cells %q, want (72–81) first", spread)
	}
}

// TestFrozenRounds: with rounds that froze a node, REDLOCK shows the
// medians of the frozen runs and of each round's frozen ÷ its own healthy
// run, with that ratio's min–max, in text and HTML; a round without a
// frozen run counts for neither.
func TestFrozenRounds(t *testing.T) {
	locktest.NoLeaks(t)
	rep := roundsReport()
	frozen := func(ops float64) *bench.Speed {
		return &bench.Speed{OpsPerSec: ops, Pair: bench.Quantiles{P99: time.Duration(ops) * time.Microsecond}}
	}
	healthy := func(round int, ops float64, f *bench.Speed) RoundSpeed {
		return RoundSpeed{Round: round, RawOpsPerSec: 20000, Speed: bench.Speed{OpsPerSec: ops}, Frozen: f}
	}
	rep.Techniques[2].Frozen = frozen(500)
	rep.Techniques[2].SpeedRounds = []RoundSpeed{
		healthy(1, 1000, frozen(500)), // 0.50
		healthy(2, 800, frozen(720)),  // 0.90
		healthy(3, 900, frozen(810)),  // 0.90
		healthy(4, 700, nil),          // froze nothing
	}
	_, redlock, _ := strings.Cut(speedTables(t, rep), "REDLOCK")
	got := tableRows(redlock)["redlock"]
	if want := []string{"5", "850", "720", "0.90 (0.50–0.90)", "0.72"}; len(got) < len(want) || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") {
		t.Errorf("REDLOCK row redlock = %q, want it to start %q: healthy the SPEED median, frozen ops/s and p99 the medians of the frozen runs, "+
			"frozen/healthy the median of the rounds' ratios with their min–max", got, want)
	}
	if !strings.Contains(redlock, "the median of the rounds' ratios, min–max in brackets") {
		t.Errorf("REDLOCK header does not say how frozen/healthy is taken over rounds:\n%s", redlock)
	}
	if html := writeParsed(t, rep).text.String(); !strings.Contains(html, "0.90 (0.50–0.90)") {
		t.Errorf("HTML REDLOCK table lacks frozen/healthy 0.90 (0.50–0.90)")
	}
}

// TestMedian: the middle value, the mean of the middle two, NaN for none.
func TestMedian(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
}

// tableRows splits the rows of text tables into cells by runs of
// spaces, by their first cell (the last row of a name, when two have it).
func tableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "  ")
		var kept []string
		for _, c := range cells {
			if c = strings.TrimSpace(c); c != "" {
				kept = append(kept, c)
			}
		}
		if len(kept) > 1 {
			rows[kept[0]] = kept[1:]
		}
	}
	return rows
}

package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// writeText prints the report as aligned tables: the guarantees matrix, the
// uncontended speed with the raw ceiling, and the contended key, then the
// problems, if any.
func writeText(w io.Writer, rep *Report) error {
	var b strings.Builder
	if len(rep.Settings.Cluster) > 0 {
		fmt.Fprintf(&b, "CLUSTER  every technique through a cluster.Pool on a Redis Cluster of masters %s\n\n", strings.Join(rep.Settings.Cluster, ", "))
	}
	writeGuarantees(&b, rep)
	b.WriteString("\n")
	writeSpeed(&b, rep)
	b.WriteString("\n")
	writeContention(&b, rep)
	if hasRedlock(rep) {
		b.WriteString("\n")
		writeRedlock(&b, rep)
	}
	writeFindings(&b, rep)
	// Tabwriter pads empty trailing cells; drop the spaces it leaves.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// writeFindings writes rep's known findings and its problems, each block
// after a blank line, when it has any: the end of the text and trace reports.
func writeFindings(b *strings.Builder, rep *Report) {
	if len(rep.KnownFindings()) > 0 {
		b.WriteString("\n")
		writeKnown(b, rep)
	}
	if problems := rep.Problems(); len(problems) > 0 {
		fmt.Fprintf(b, "\nPROBLEMS (%d)\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(b, "  %s\n", p)
		}
	}
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeGuarantees prints technique x property.
func writeGuarantees(w io.Writer, rep *Report) {
	legend := ""
	if len(rep.KnownFindings()) > 0 {
		legend = "; known = contradicts it, a known finding about a peer (KNOWN FINDINGS)"
	}
	fmt.Fprintf(w, "GUARANTEES  cell: claimed? (yes/no)  observed  violations/attempts;  !! = verdict contradicts the claim%s\n", legend)
	tw := table(w)
	header := []string{"technique"}
	for _, s := range rep.Scenarios {
		header = append(header, propertyHeader(rep, s))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, t := range rep.Techniques {
		row := []string{t.Name}
		for _, s := range rep.Scenarios {
			r, ok := t.result(s)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, cellText(r, t.isKnown(s)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// propertyHeader names the property scenario checks, from any result of it;
// when an earlier scenario checks the same property (faulty-network after
// mutual-exclusion), the scenario's name follows in parentheses, so that
// no two columns read alike.
func propertyHeader(rep *Report, scenario string) string {
	prop := scenarioProperty(rep, scenario)
	for _, s := range rep.Scenarios {
		if s == scenario {
			break
		}
		if scenarioProperty(rep, s) == prop {
			return prop + " (" + scenario + ")"
		}
	}
	return prop
}

// scenarioProperty returns the property of scenario from any result of it,
// or the scenario's name when no result names one.
func scenarioProperty(rep *Report, scenario string) string {
	for _, t := range rep.Techniques {
		if r, ok := t.result(scenario); ok && r.Property != "" {
			return r.Property
		}
	}
	return scenario
}

// cellText renders one verdict: "yes holds 0/200", "no violated 1/1",
// "yes VIOLATED 3/200 !!", or, for a known finding about a peer,
// "yes VIOLATED 3/200 known".
func cellText(r strategytest.Result, known bool) string {
	claim := "no"
	if r.Claimed {
		claim = "yes"
	}
	var s string
	switch r.Verdict {
	case strategytest.NotApplicable:
		s = claim + " n/a"
	case strategytest.Failed:
		s = claim + " FAILED"
	case strategytest.Violated:
		v := "violated"
		if r.Claimed {
			v = "VIOLATED"
		}
		s = fmt.Sprintf("%s %s %d/%d", claim, v, r.Violations, r.Attempts)
	default:
		s = fmt.Sprintf("%s %s %d/%d", claim, r.Verdict, r.Violations, r.Attempts)
	}
	switch expected, judged := r.Expected(); {
	case known:
		s += " known"
	case judged && !expected:
		s += " !!"
	}
	return s
}

// writeSpeed prints the uncontended measurements, the raw ceiling first;
// with rounds, the medians over them and a column of the per-round
// ratio's spread.
func writeSpeed(w io.Writer, rep *Report) {
	st := rep.Settings
	rounds := rep.hasRounds()
	fmt.Fprintf(w, "SPEED  uncontended: %d workers, each on its own key, Lock+Unlock for %v; times in ms; round trips per Lock + Unlock\n",
		st.Workers, st.Bench)
	if rounds {
		fmt.Fprintf(w, "       %s\n", roundsNote(st))
		fmt.Fprintf(w, "       raw: the ceiling, measured at the start and at the end of the run (%s ops/s; the faster is round 1's) and before each row in every further round (%s)\n", rawRunsText(rep.Raw), rawRoundsText(rep.Raw))
	} else {
		fmt.Fprintf(w, "       raw: the ceiling, measured at the start and at the end of the run (%s ops/s); the faster is shown\n", rawRunsText(rep.Raw))
	}
	tw := table(w)
	fmt.Fprintf(w, "       redis µs: Redis CPU per pair, the nodes' main-thread CPU time (INFO cpu); allocs: heap allocations per pair in this process, the loop's own included\n")
	spread := func(cell string) string { return "" }
	if rounds {
		spread = func(cell string) string { return cell + "\t" }
	}
	fmt.Fprintf(tw, "technique\tnodes\tops/s\tof raw\t%spair p50\tpair p99\tredis µs\tallocs\tround trips\tclaimed\n", spread("min–max"))
	if raw := rep.rawFigures(); raw.measured {
		us, allocs := costCells(raw.cost)
		fmt.Fprintf(tw, "%s\t1\t%s\t100%%\t%s%s\t%s\t%s\t%s\t1+1\t1+1\n", RawName, opsText(raw.ops), spread(""), msText(raw.pair.P50), msText(raw.pair.P99), us, allocs)
	} else {
		fmt.Fprintf(tw, "%s\t1\tfailed\t\t%s\t\t\t\t\t\n", RawName, spread(""))
	}
	for _, t := range rep.Techniques {
		ops, share, p50, p99, trips, claimed := "-", "-", "-", "-", "-", "-"
		f := rep.techniqueFigures(t)
		us, allocs := costCells(f.cost)
		if f.measured {
			ops, share, p50, p99 = opsText(f.ops), f.shareText(), msText(f.pair.P50), msText(f.pair.P99)
		}
		if t.Trips != nil {
			trips = tripsText(t.Trips.Acquire, t.Trips.Release)
		}
		if p := t.Properties; p != nil {
			claimed = fmt.Sprintf("%d+%d", p.AcquireRoundTrips, p.ReleaseRoundTrips)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Nodes, ops, share, spread(f.spreadText()), p50, p99, us, allocs, trips, claimed)
	}
	tw.Flush()
}

// writeContention prints the contended key, one Locker per worker and one
// shared.
func writeContention(w io.Writer, rep *Report) {
	wl := rep.Settings.Workload
	fmt.Fprintf(w, "CONTENDED  one key, %d workers x %d critical sections of %v; times in ms\n", wl.Workers, wl.Sections, wl.Hold)
	fmt.Fprintf(w, "           apart: one Locker per worker (like %d processes); shared: one Locker for all %d workers\n", wl.Workers, wl.Workers)
	if rep.hasRounds() {
		fmt.Fprintf(w, "           median of %d rounds (round 1: the run's own; each further round: right after the technique's uncontended measurement, on its fresh nodes); util's min–max in brackets\n", rep.Settings.Rounds)
	}
	tw := table(w)
	fmt.Fprintln(tw, "\tapart\t\t\t\tshared\t\t\t")
	fmt.Fprintln(tw, "technique\tutil\twait p50\twait p99\thand-off p50\tutil\twait p50\twait p99\thand-off p50")
	var overlaps []string
	for _, t := range rep.Techniques {
		row := []string{t.Name}
		for _, shared := range []bool{false, true} {
			f := rep.contention(t, shared)
			c := f.c
			if c == nil {
				row = append(row, "-", "-", "-", "-")
				continue
			}
			row = append(row, f.utilText(), msText(c.Wait.P50), msText(c.Wait.P99), msText(c.Handoff.P50))
			if c.Overlaps > 0 {
				overlaps = append(overlaps, fmt.Sprintf("%s: %d overlapping holders (lockers %d)", t.Name, c.Overlaps, c.Lockers))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, n := range unfinishedNotes(rep) {
		fmt.Fprintf(w, "           %s\n", n)
	}
	writeCrowds(w, rep)
	for _, t := range rep.Techniques {
		for _, c := range t.Crowds {
			if c.Contention.Overlaps > 0 {
				overlaps = append(overlaps, fmt.Sprintf("%s: %d overlapping holders (%d contenders)", t.Name, c.Contention.Overlaps, c.Contenders))
			}
		}
	}
	for _, o := range overlaps {
		fmt.Fprintf(w, "  %s\n", o)
	}
}

// hasRedlock reports whether a multi-node technique was measured with a
// node frozen, which the REDLOCK table shows.
func hasRedlock(rep *Report) bool {
	for _, t := range rep.Techniques {
		if t.Nodes > 1 && t.Frozen != nil {
			return true
		}
	}
	return false
}

// writeRedlock prints the multi-node techniques healthy (the SPEED
// figure), with one node frozen, and contended apart.
func writeRedlock(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "REDLOCK  multi-node techniques: uncontended ops/s healthy (as in SPEED) and with the last node frozen (each call bounded by %v), and contended apart\n", frozenCallBound)
	if rep.hasRounds() {
		fmt.Fprintln(w, "         frozen/healthy: against the healthy run on the same nodes just before the frozen one, in each round, not the median: the median of the rounds' ratios, min–max in brackets; frozen ops/s and p99: medians")
	}
	tw := table(w)
	fmt.Fprintln(tw, strings.Join(redlockHead, "\t"))
	for _, r := range redlockRows(rep) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// redlockHead heads the REDLOCK table's columns.
var redlockHead = []string{"technique", "nodes", "healthy ops/s", "frozen ops/s", "frozen/healthy", "frozen pair p99", "apart util", "apart wait p99"}

// redlockRows are the REDLOCK table's rows, one per multi-node technique.
func redlockRows(rep *Report) [][]string {
	var rows [][]string
	for _, t := range rep.Techniques {
		if t.Nodes < 2 {
			continue
		}
		healthy, frozen, ratio, p99, util, wait := "-", "-", "-", "-", "-", "-"
		f := rep.techniqueFigures(t)
		if f.measured {
			healthy = opsText(f.ops)
		}
		if fr := rep.frozenFigures(t); fr.measured {
			frozen, p99, ratio = opsText(fr.ops), msText(fr.p99), fr.ratioText()
		}
		if a := rep.contention(t, false); a.c != nil { // as in CONTENDED
			util, wait = pctText(a.c.Utilisation), msText(a.c.Wait.P99)
		}
		rows = append(rows, []string{t.Name, fmt.Sprint(t.Nodes), healthy, frozen, ratio, p99, util, wait})
	}
	return rows
}

// costCells renders a Cost as its two cells, "-" when not measured.
func costCells(c *Cost) (us, allocs string) {
	if c == nil {
		return "-", "-"
	}
	return usText(c.RedisMicrosPerPair), fmt.Sprintf("%.0f", c.AllocsPerPair)
}

// usText renders microseconds with one decimal.
func usText(v float64) string { return fmt.Sprintf("%.1f", v) }

// rawRunsText lists the ceiling's measurements: "20832, 19950".
func rawRunsText(r Raw) string {
	var parts []string
	for _, s := range r.Runs {
		parts = append(parts, opsText(s.OpsPerSec))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// rawRoundsText lists the ceiling's measurements in rounds 2 and on, one
// before each row of each round:
// "20832, 19950"; "none" when none succeeded.
func rawRoundsText(r Raw) string {
	var parts []string
	for _, s := range r.Rounds {
		if s.Round > 1 {
			parts = append(parts, opsText(s.Speed.OpsPerSec))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// opsText renders a rate without decimals.
func opsText(v float64) string { return fmt.Sprintf("%.0f", v) }

// pctText renders a ratio as a whole percentage.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

// pctSpread renders the least and greatest of per-round fractions in
// whole percent: "(72–81)".
func pctSpread(low, high float64) string { return fmt.Sprintf("(%.0f–%.0f)", 100*low, 100*high) }

// msText renders a duration in milliseconds with two or three significant
// digits.
func msText(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 1:
		return fmt.Sprintf("%.2f", ms)
	case ms < 10:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

// tripsText renders acquire+release round trips, whole numbers without
// decimals.
func tripsText(acquire, release float64) string { return countText(acquire) + "+" + countText(release) }

func countText(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

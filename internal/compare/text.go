package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// writeText prints the report as aligned tables: the guarantees matrix, the
// uncontended speed with the raw ceiling, and the contended key, then the
// problems, if any.
func writeText(w io.Writer, rep *Report) error {
	var b strings.Builder
	writeGuarantees(&b, rep)
	b.WriteString("\n")
	writeSpeed(&b, rep)
	b.WriteString("\n")
	writeContention(&b, rep)
	if problems := rep.Problems(); len(problems) > 0 {
		fmt.Fprintf(&b, "\nPROBLEMS (%d)\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	// Tabwriter pads empty trailing cells; drop the spaces it leaves.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeGuarantees prints technique x property.
func writeGuarantees(w io.Writer, rep *Report) {
	fmt.Fprintln(w, "GUARANTEES  cell: claimed? (yes/no)  observed  violations/attempts;  !! = verdict contradicts the claim")
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
			row = append(row, cellText(r))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// propertyHeader names the property scenario checks, from any result of it.
func propertyHeader(rep *Report, scenario string) string {
	for _, t := range rep.Techniques {
		if r, ok := t.result(scenario); ok && r.Property != "" {
			return r.Property
		}
	}
	return scenario
}

// cellText renders one verdict: "yes holds 0/200", "no violated 1/1",
// "yes VIOLATED 3/200 !!".
func cellText(r strategytest.Result) string {
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
	if expected, judged := r.Expected(); judged && !expected {
		s += " !!"
	}
	return s
}

// writeSpeed prints the uncontended measurements, the raw ceiling first.
func writeSpeed(w io.Writer, rep *Report) {
	st := rep.Settings
	fmt.Fprintf(w, "SPEED  uncontended: %d workers, each on its own key, Lock+Unlock for %v; times in ms; round trips per Lock + Unlock\n",
		st.Workers, st.Bench)
	fmt.Fprintf(w, "       raw: the ceiling, measured at the start and at the end of the run (%s ops/s); the faster is shown\n", rawRunsText(rep.Raw))
	tw := table(w)
	fmt.Fprintln(tw, "technique\tnodes\tops/s\tof raw\tpair p50\tpair p99\tround trips\tclaimed")
	var ceiling float64
	if s := rep.Raw.Speed; s != nil {
		ceiling = s.OpsPerSec
		fmt.Fprintf(tw, "%s\t1\t%s\t100%%\t%s\t%s\t1+1\t1+1\n", RawName, opsText(s.OpsPerSec), msText(s.Pair.P50), msText(s.Pair.P99))
	} else {
		fmt.Fprintf(tw, "%s\t1\tfailed\t\t\t\t\t\n", RawName)
	}
	for _, t := range rep.Techniques {
		ops, share, p50, p99, trips, claimed := "-", "-", "-", "-", "-", "-"
		if s := t.Speed; s != nil {
			ops, p50, p99 = opsText(s.OpsPerSec), msText(s.Pair.P50), msText(s.Pair.P99)
			if ceiling > 0 {
				share = pctText(s.OpsPerSec / ceiling)
			}
		}
		if t.Trips != nil {
			trips = tripsText(t.Trips.Acquire, t.Trips.Release)
		}
		if p := t.Properties; p != nil {
			claimed = fmt.Sprintf("%d+%d", p.AcquireRoundTrips, p.ReleaseRoundTrips)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Nodes, ops, share, p50, p99, trips, claimed)
	}
	tw.Flush()
}

// writeContention prints the contended key, one Locker per worker and one
// shared.
func writeContention(w io.Writer, rep *Report) {
	wl := rep.Settings.Workload
	fmt.Fprintf(w, "CONTENDED  one key, %d workers x %d critical sections of %v; times in ms\n", wl.Workers, wl.Sections, wl.Hold)
	fmt.Fprintf(w, "           apart: one Locker per worker (like %d processes); shared: one Locker for all %d workers\n", wl.Workers, wl.Workers)
	tw := table(w)
	fmt.Fprintln(tw, "\tapart\t\t\t\tshared\t\t\t")
	fmt.Fprintln(tw, "technique\tutil\twait p50\twait p99\thand-off p50\tutil\twait p50\twait p99\thand-off p50")
	var overlaps []string
	for _, t := range rep.Techniques {
		row := []string{t.Name}
		for _, c := range []*bench.Contention{t.Apart, t.Shared} {
			if c == nil {
				row = append(row, "-", "-", "-", "-")
				continue
			}
			row = append(row, pctText(c.Utilisation), msText(c.Wait.P50), msText(c.Wait.P99), msText(c.Handoff.P50))
			if c.Overlaps > 0 {
				overlaps = append(overlaps, fmt.Sprintf("%s: %d overlapping holders (lockers %d)", t.Name, c.Overlaps, c.Lockers))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, o := range overlaps {
		fmt.Fprintf(w, "  %s\n", o)
	}
}

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

// opsText renders a rate without decimals.
func opsText(v float64) string { return fmt.Sprintf("%.0f", v) }

// pctText renders a ratio as a whole percentage.
func pctText(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

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

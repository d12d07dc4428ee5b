package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/cliflag"
	"github.com/lockzoo/lockzoo/strategy"
)

// Crowd is one many-contenders measurement: Contenders workers, each with a
// Locker of its own (like as many processes), on one hot key
// (bench.CrowdWorkload), and the Redis CPU it cost per critical section.
type Crowd struct {
	Contenders int              `json:"contenders"`
	Contention bench.Contention `json:"contention"`
	// RedisMicrosPerSection is the CPU time of the nodes' main threads
	// (cpuMicros, as Cost: commands, scripts and network I/O alike, so a
	// client that polls pays for every request it sends) over the sections
	// completed; 0 when not measured.
	RedisMicrosPerSection float64 `json:"redis_us_per_section"`
	// Unfinished says why the crowd did not finish its sections within the
	// measurement's bound (a waiter's Lock gave up when the bound ended):
	// a result the technique earned, shown in its row, not a failed
	// measurement. Empty when it finished.
	Unfinished string `json:"unfinished,omitempty"`
}

// crowdStep measures n contenders apart, each on a Locker of its own, and
// appends the result to m.t.Crowds.
func (m *measurer) crowdStep(n int) step {
	return step{fmt.Sprintf("contenders %d", n), func(ctx context.Context) (string, error) {
		w := bench.CrowdWorkload(n)
		lockers := make([]strategy.Locker, 0, n)
		defer func() { settle(lockers) }() // n Lockers' connections go before the next step
		for range n {
			l, err := m.target.New(m.nodes.pools, m.config())
			if err != nil {
				return "", err
			}
			lockers = append(lockers, l)
		}
		cpu0, err := cpuMicros(ctx, m.nodes.pools)
		if err != nil {
			return "", err
		}
		c, err := bench.ContendedApart(ctx, lockers, w)
		if why, ok := unfinished(err, m.cfg.bound); ok {
			m.t.Crowds = append(m.t.Crowds, Crowd{Contenders: n, Unfinished: why})
			return unfinishedText(m.cfg.bound), nil
		}
		if err != nil {
			return "", err
		}
		cpu1, err := cpuMicros(ctx, m.nodes.pools)
		if err != nil {
			return "", err
		}
		cr := Crowd{Contenders: n, Contention: c}
		if c.Sections > 0 {
			cr.RedisMicrosPerSection = float64(cpu1-cpu0) / float64(c.Sections)
		}
		m.t.Crowds = append(m.t.Crowds, cr)
		return fmt.Sprintf("%s, Redis %s µs/section", contentionText(c), usText(cr.RedisMicrosPerSection)), nil
	}}
}

// unfinished reports whether err is a contended run's Lock giving up when
// the measurement's bound ended, and says so: the technique did not finish
// its sections within bound (-bound), a result it earned rather than a
// failed measurement.
func unfinished(err error, bound time.Duration) (string, bool) {
	if errors.Is(err, strategy.ErrNotAcquired) && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("did not finish within %v: %v", bound, err), true
	}
	return "", false
}

// unfinishedText is the progress line of a contended run that did not
// finish within bound (unfinished), and its note under the CONTENDED table.
func unfinishedText(bound time.Duration) string {
	return fmt.Sprintf("did not finish within %v (a Lock gave up at the bound)", bound)
}

// unfinishedNotes are the lines that say which of rep's contended runs,
// apart or shared, did not finish, in round 1 (the run's own) and, with
// -rounds, in each further round ("in round 2"): their cells show "-", or
// with rounds the medians of the rounds that finished.
func unfinishedNotes(rep *Report) []string {
	var notes []string
	note := func(t Technique, kind, why, where string) {
		if why != "" {
			notes = append(notes, fmt.Sprintf("%s: contended %s %s%s", t.Name, kind, unfinishedText(rep.Settings.bound()), where))
		}
	}
	for _, t := range rep.Techniques {
		note(t, "apart", t.ApartUnfinished, "")
		note(t, "shared", t.SharedUnfinished, "")
		for _, r := range t.ContendedRounds {
			if r.Round > 1 {
				where := fmt.Sprintf(" in round %d", r.Round)
				note(t, "apart", r.ApartUnfinished, where)
				note(t, "shared", r.SharedUnfinished, where)
			}
		}
	}
	return notes
}

// writeCrowds prints the many-contenders rows of the CONTENDED table, one
// per technique and number of contenders, when any were measured. A crowd
// that did not finish says so from the util column on, in no column's cell
// (it would widen util): the table is laid out with an empty cell in each
// of that row's columns, since a tabwriter line with fewer cells ends the
// columns it lacks and the rows after it would lose their alignment, and
// the text is written into the row afterwards.
func writeCrowds(w io.Writer, rep *Report) {
	if len(rep.Settings.Crowds) == 0 {
		return
	}
	fmt.Fprintf(w, "           many contenders: N workers, each with a Locker of its own, on one key, 1 ms sections (max(4, 256/N) each);\n")
	fmt.Fprintf(w, "           redis µs: the nodes' main-thread CPU per critical section, from INFO cpu (network I/O included: every request counts)\n")
	var b strings.Builder
	tw := table(&b)
	fmt.Fprintln(tw, "technique\tN\tutil\twait p50\twait p99\tp99/p50\thand-off p50\tredis µs")
	texts := map[int]string{} // line of the table -> what an unfinished crowd says
	line := 1
	for _, t := range rep.Techniques {
		for _, c := range t.Crowds {
			fields := c.fields()
			if c.Unfinished != "" {
				texts[line] = fmt.Sprintf("did not finish within %v", rep.Settings.bound())
				fields = make([]string, len(fields))
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, c.Contenders, strings.Join(fields, "\t"))
			line++
		}
	}
	tw.Flush()
	lines := strings.SplitAfter(b.String(), "\n")
	util := strings.Index(lines[0], "util") // the column the text starts in
	for i, text := range texts {
		row := strings.TrimRight(lines[i], " \n")
		lines[i] = row + strings.Repeat(" ", max(util-len(row), 2)) + text + "\n"
	}
	io.WriteString(w, strings.Join(lines, ""))
}

// fields are a finished crowd's columns after N, as text: util, wait p50
// and p99, p99/p50, hand-off p50 and Redis µs per section.
func (c Crowd) fields() []string {
	k := c.Contention
	ratio := "-"
	if k.Wait.P50 > 0 {
		ratio = fmt.Sprintf("%.2f", float64(k.Wait.P99)/float64(k.Wait.P50))
	}
	return []string{pctText(k.Utilisation), msText(k.Wait.P50), msText(k.Wait.P99), ratio, msText(k.Handoff.P50), usText(c.RedisMicrosPerSection)}
}

// crowdSection is the HTML report's many-contenders table: the note, the
// head and a row per technique and crowd, the cells writeCrowds prints.
func crowdSection(rep *Report) (string, []cell, []row) {
	if len(rep.Settings.Crowds) == 0 {
		return "", nil, nil
	}
	note := "N workers, each with a Locker of its own (like N processes), on one key, 1 ms sections (max(4, 256/N) each). " +
		"p99/p50 near 1 is a fair line; Redis µs is the nodes' main-thread CPU per critical section (INFO cpu, network I/O included: every request counts)."
	head := []cell{{Text: "technique"}, num("N"), num("util"), num("wait p50 ms"), num("wait p99 ms"), num("p99/p50"), num("hand-off p50 ms"), num("Redis µs")}
	var rows []row
	for _, t := range rep.Techniques {
		for _, c := range t.Crowds {
			cells := []cell{{Class: "name", Text: t.Name}, num(fmt.Sprint(c.Contenders))}
			if c.Unfinished != "" {
				cells = append(cells, cell{Text: fmt.Sprintf("did not finish within %v", rep.Settings.bound())})
				rows = append(rows, row{Cells: cells})
				continue
			}
			for _, f := range c.fields() {
				cells = append(cells, num(f))
			}
			rows = append(rows, row{Cells: cells})
		}
	}
	return note, head, rows
}

// crowdsFlag reads -contenders: a comma-separated list of positive
// numbers, or "none".
func crowdsFlag(s string) ([]int, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	var out []int
	for _, part := range cliflag.List(s) {
		var n int
		if _, err := fmt.Sscanf(part, "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != part {
			return nil, fmt.Errorf("%q is not a positive number", part)
		}
		out = append(out, n)
	}
	return out, nil
}

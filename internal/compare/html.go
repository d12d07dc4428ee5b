package compare

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"os"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// reportTemplate is the HTML report: one self-contained page, well-formed
// XML as well as HTML, with inline CSS and SVG and no scripts, fonts or
// other resources fetched from anywhere.
//
//go:embed report.html
var reportTemplate string

// Colours of the chart series.
const (
	colorApart  = "#1f5f99"
	colorShared = "#8fb8de"
	colorSpeed  = "#2e7d4f"
)

// writeHTML renders the report to path.
func writeHTML(path string, rep *Report) error {
	tmpl, err := template.New("report").Parse(reportTemplate)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, newHTMLView(rep)); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// htmlView is what the template shows.
type htmlView struct {
	Started, Elapsed, Backend, Settings string
	Problems                            []string
	Known                               []string // known findings about peers
	Headers                             []string
	Matrix                              []matrixRow
	SpeedNote, ContNote                 string
	SpeedChart, ContChart               chart
	SpeedHead, ContHead                 []cell
	SpeedRows, ContRows                 []row
	CrowdNote                           string
	CrowdHead                           []cell
	CrowdRows                           []row
	RedlockNote                         string
	RedlockHead                         []cell
	RedlockRows                         []row
	Accounts                            []accounts
	Timelines                           []figureGroup
	// Measured: the run measured speed (not a -trace run), so the speed
	// and contention sections are shown.
	Measured bool
}

type matrixRow struct {
	Name  string
	Cells []matrixCell
}

type matrixCell struct{ Class, Verdict, Counts, Claim, Account, Href string }

type chart struct {
	W, H, Label string
	Panels      []panel
}

type cell struct{ Class, Text string }

type row struct {
	Class string
	Cells []cell
}

type accounts struct {
	Technique string
	Lines     []string
}

func newHTMLView(rep *Report) htmlView {
	st := rep.Settings
	backend := rep.Backend
	switch {
	case backend == "addrs":
		backend = fmt.Sprintf("existing servers %v", st.Addrs)
	case backend == backendSentinel:
		backend = sentinelText(st)
	case len(st.Cluster) > 0:
		backend = fmt.Sprintf("a Redis Cluster of masters %v, through a cluster.Pool", st.Cluster)
	default:
		backend = "fresh " + backend + " nodes"
	}
	v := htmlView{
		Started:  rep.Started.Format(time.RFC1123),
		Elapsed:  "took " + rep.Elapsed.Round(time.Second).String(),
		Backend:  backend,
		Settings: fmt.Sprintf("Uncontended: %d workers for %v each. Contended: %d workers x %d sections of %v.", st.Workers, st.Bench, st.Workload.Workers, st.Workload.Sections, st.Workload.Hold),
		Problems: rep.Problems(),
		Known:    rep.KnownFindings(),
		SpeedNote: fmt.Sprintf("%d goroutines, each locking and unlocking its own key for %v. The dashed line is %s on one node, measured in the same run (at its start and its end: %s ops/s; the faster is drawn): "+
			"the most a single-node technique that checks the owner on release could do. Round trips are counted on the connections, per Lock and per Unlock.", st.Workers, st.Bench, RawName, rawRunsText(rep.Raw)),
		ContNote: fmt.Sprintf("One key, %d workers, each running %d critical sections of %v. Utilisation is the time spent inside critical sections over the wall time (higher is better); "+
			"wait is from calling Lock to holding the lock (lower is better); hand-off is from one holder calling Unlock to the next one holding. "+
			"Apart: each worker has its own Locker, like separate processes. Shared: the workers share one Locker.", st.Workload.Workers, st.Workload.Sections, st.Workload.Hold),
	}
	if rep.hasRounds() {
		v.ContNote += fmt.Sprintf(" The figures are the medians of %d rounds: round 1 is the run's own, and each further round runs apart and shared again right after the technique's uncontended measurement, on its fresh nodes; util's least and greatest over the rounds are in brackets.", rep.Settings.Rounds)
	}
	for _, n := range unfinishedNotes(rep) {
		v.ContNote += " " + n + "."
	}
	if rep.hasRounds() {
		v.SpeedNote = fmt.Sprintf("%d goroutines, each locking and unlocking its own key for %v. The figures are the medians of %d interleaved rounds: round 1 is the run's own measurement, against the faster of the ceilings measured at the run's start and end (%s ops/s), "+
			"and each further round measures, for every technique, the ceiling (%s ops/s) and then the technique, each on fresh nodes, one right after the other. "+
			"A row's share of raw is the median of its ratios to the ceiling measured just before it, so that the machine's speed drifting during the run moves a row and its ceiling together; min–max is that ratio's least and greatest. "+
			"The dashed line is the median of the ceiling, %s on one node: the most a single-node technique that checks the owner on release could do. Round trips are counted on the connections, per Lock and per Unlock.",
			st.Workers, st.Bench, rep.Settings.Rounds, rawRunsText(rep.Raw), rawRoundsText(rep.Raw), RawName)
	}
	for _, s := range rep.Scenarios {
		v.Headers = append(v.Headers, propertyHeader(rep, s))
	}
	v.Measured = rep.Raw.Speed != nil || rep.Raw.Error != ""
	for _, t := range rep.Techniques {
		v.Measured = v.Measured || t.Speed != nil || t.Apart != nil || t.Shared != nil || t.ApartUnfinished != "" || t.SharedUnfinished != "" || len(t.Crowds) > 0 || len(t.Errors) > 0
	}
	if !v.Measured {
		v.Settings = "Only the suite ran (-trace): no measurements."
	}
	ids := figureIDs{}
	for _, t := range rep.Techniques {
		mr := matrixRow{Name: t.Name}
		acc := accounts{Technique: t.Name}
		group := figureGroup{Technique: t.Name}
		for _, s := range rep.Scenarios {
			r, ok := t.result(s)
			if !ok {
				mr.Cells = append(mr.Cells, matrixCell{Class: "na", Verdict: "not run"})
				continue
			}
			c := matrixHTML(r, t.isKnown(s))
			c.Href = ids.of(t.Name, s)
			mr.Cells = append(mr.Cells, c)
			group.Figures = append(group.Figures, newFigure(c.Href, r, c))
			line := fmt.Sprintf("%s (%s): %s", r.Scenario, r.Verdict, r.Account)
			if why, ok := t.Known[s]; ok {
				line += " [known finding: " + why + "]"
			}
			acc.Lines = append(acc.Lines, line)
		}
		acc.Lines = append(acc.Lines, t.Errors...)
		v.Matrix = append(v.Matrix, mr)
		v.Accounts = append(v.Accounts, acc)
		v.Timelines = append(v.Timelines, group)
	}
	v.SpeedChart, v.SpeedHead, v.SpeedRows = speedSection(rep)
	v.ContChart, v.ContHead, v.ContRows = contentionSection(rep)
	v.CrowdNote, v.CrowdHead, v.CrowdRows = crowdSection(rep)
	if hasRedlock(rep) {
		v.RedlockNote = fmt.Sprintf("Multi-node techniques: uncontended pairs per second with every node healthy (as above) and with the last node frozen (SIGSTOP or docker pause), each Lock and Unlock bounded by %v; and the contended key, one Locker per worker.", frozenCallBound)
		if rep.hasRounds() {
			v.RedlockNote += " Frozen/healthy compares each round's frozen run with the healthy run on the same nodes just before it, not with the median: it is the median of the rounds' ratios, with their least and greatest in brackets; frozen ops/s and p99 are medians."
		}
		for i, h := range redlockHead {
			c := num(h)
			if i == 0 {
				c = cell{Text: h}
			}
			v.RedlockHead = append(v.RedlockHead, c)
		}
		for _, r := range redlockRows(rep) {
			cells := []cell{{Class: "name", Text: r[0]}}
			for _, text := range r[1:] {
				cells = append(cells, num(text))
			}
			v.RedlockRows = append(v.RedlockRows, row{Cells: cells})
		}
	}
	return v
}

// matrixHTML renders one verdict cell; known marks a known finding about
// a peer, shown as violated with its account and labelled known.
func matrixHTML(r strategytest.Result, known bool) matrixCell {
	c := matrixCell{Verdict: string(r.Verdict), Counts: fmt.Sprintf("%d/%d violations", r.Violations, r.Attempts), Claim: "not claimed", Account: r.Account}
	if r.Claimed {
		c.Claim = "claimed"
	}
	switch r.Verdict {
	case strategytest.Holds:
		c.Class = "holds"
	case strategytest.Violated:
		c.Class = "violated"
		if r.Claimed {
			c.Class, c.Verdict = "broken", "⚠ VIOLATED"
		}
	case strategytest.NotApplicable:
		c.Class, c.Verdict, c.Counts = "na", "n/a", ""
	default:
		c.Class, c.Counts = "failed", ""
	}
	if expected, judged := r.Expected(); judged && !expected && c.Class != "broken" {
		c.Class += " contradicts"
	}
	if known {
		c.Verdict += " (known finding)"
	}
	return c
}

func num(text string) cell { return cell{Class: "num", Text: text} }

// speedSection draws the uncontended chart and its table; with rounds,
// the medians, and a column of the per-round ratio's spread.
func speedSection(rep *Report) (chart, []cell, []row) {
	rounds := rep.hasRounds()
	spread := func(c cell) []cell { return nil }
	if rounds {
		spread = func(c cell) []cell { return []cell{c} }
	}
	head := append([]cell{{Text: "technique"}, num("nodes"), num("ops/s"), num("of raw")}, spread(num("of raw min–max"))...)
	head = append(head, num("pair p50 ms"), num("pair p99 ms"), num("Redis µs/pair"), num("allocs/pair"), num("round trips"), num("claimed"))
	var rows []row
	var ceiling *float64
	if raw := rep.rawFigures(); raw.measured {
		ceiling = &raw.ops
		us, allocs := costCells(raw.cost)
		cells := append([]cell{{Class: "name", Text: RawName}, num("1"), num(opsText(raw.ops)), num("100%")}, spread(num(""))...)
		rows = append(rows, row{Class: "raw", Cells: append(cells, num(msText(raw.pair.P50)), num(msText(raw.pair.P99)), num(us), num(allocs), num("1+1"), num("1+1"))})
	}
	var labels []string
	ops := series{Name: "ops/s", Color: colorSpeed}
	for _, t := range rep.Techniques {
		labels = append(labels, t.Name)
		cells := []cell{{Class: "name", Text: t.Name}, num(fmt.Sprint(t.Nodes))}
		f := rep.techniqueFigures(t)
		if f.measured {
			ops.Values = append(ops.Values, f.ops)
			cells = append(cells, num(opsText(f.ops)), num(f.shareText()))
			cells = append(cells, spread(num(f.spreadText()))...)
			cells = append(cells, num(msText(f.pair.P50)), num(msText(f.pair.P99)))
		} else {
			ops.Values = append(ops.Values, math.NaN())
			cells = append(cells, num("-"), num("-"))
			cells = append(cells, spread(num("-"))...)
			cells = append(cells, num("-"), num("-"))
		}
		trips, claimed := "-", "-"
		if t.Trips != nil {
			trips = tripsText(t.Trips.Acquire, t.Trips.Release)
		}
		if p := t.Properties; p != nil {
			claimed = fmt.Sprintf("%d+%d", p.AcquireRoundTrips, p.ReleaseRoundTrips)
		}
		us, allocs := costCells(f.cost)
		rows = append(rows, row{Cells: append(cells, num(us), num(allocs), num(trips), num(claimed))})
	}
	refText := ""
	if ceiling != nil {
		refText = "raw ceiling " + opsText(*ceiling) + " ops/s"
	}
	title := "Uncontended Lock+Unlock pairs per second"
	if rounds {
		title += fmt.Sprintf(", median of %d rounds", rep.Settings.Rounds)
	}
	p := hbars(0, 0, 960, title, "higher is better", labels, []series{ops}, 0, opsText, ceiling, refText)
	return chart{W: p.W, H: p.H, Label: "uncontended ops/s per technique", Panels: []panel{p}}, head, rows
}

// contentionSection draws the contended charts and their table.
func contentionSection(rep *Report) (chart, []cell, []row) {
	head := []cell{{Text: "technique"}}
	for range 2 { // apart, then shared
		head = append(head, num("util"), num("wait p50 ms"), num("wait p99 ms"), num("hand-off p50 ms"))
	}
	var labels []string
	utilA := series{Name: "apart (Locker per worker)", Color: colorApart}
	utilS := series{Name: "shared (one Locker)", Color: colorShared}
	waitA, waitS := utilA, utilS
	var rows []row
	for _, t := range rep.Techniques {
		labels = append(labels, t.Name)
		cells := []cell{{Class: "name", Text: t.Name}}
		apart, shared := rep.contention(t, false), rep.contention(t, true)
		for _, f := range []contentionFigures{apart, shared} {
			c := f.c
			if c == nil {
				cells = append(cells, num("-"), num("-"), num("-"), num("-"))
				continue
			}
			cells = append(cells, num(f.utilText()), num(msText(c.Wait.P50)), num(msText(c.Wait.P99)), num(msText(c.Handoff.P50)))
		}
		rows = append(rows, row{Cells: cells})
		u, w := contentionValues(apart.c)
		utilA.Values, waitA.Values = append(utilA.Values, u), append(waitA.Values, w)
		u, w = contentionValues(shared.c)
		utilS.Values, waitS.Values = append(utilS.Values, u), append(waitS.Values, w)
	}
	pct := func(v float64) string { return fmt.Sprintf("%.0f%%", v) }
	ms := func(v float64) string {
		if v == 0 {
			return "0"
		}
		return msText(time.Duration(v * float64(time.Millisecond)))
	}
	left := hbars(0, 0, 470, "Utilisation", "higher is better", labels, []series{utilA, utilS}, 100, pct, nil, "")
	right := hbars(490, 0, 470, "p99 wait for the lock, ms", "lower is better", labels, []series{waitA, waitS}, 0, ms, nil, "")
	return chart{W: "960", H: left.H, Label: "contended utilisation and p99 wait per technique", Panels: []panel{left, right}}, head, rows
}

// contentionValues returns utilisation in percent and p99 wait in ms, NaN
// when there is no measurement.
func contentionValues(c *bench.Contention) (util, wait float64) {
	if c == nil {
		return math.NaN(), math.NaN()
	}
	return 100 * c.Utilisation, float64(c.Wait.P99) / float64(time.Millisecond)
}

package compare

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// parseTrace splits -trace's TECHNIQUE/SCENARIO. Technique names hold "/"
// themselves (getset_timestamp/method1), so the technique is the known name
// that, followed by "/", leaves a known scenario; the longest such name
// when several do.
func parseTrace(arg string, targets []strategytest.Target) (strategytest.Target, string, error) {
	var (
		best     strategytest.Target
		scenario string
		found    bool
	)
	for _, t := range targets {
		rest, ok := strings.CutPrefix(arg, t.Name+"/")
		if ok && slices.Contains(strategytest.ScenarioNames(), rest) && (!found || len(t.Name) > len(best.Name)) {
			best, scenario, found = t, rest, true
		}
	}
	if !found {
		return strategytest.Target{}, "", fmt.Errorf("%q is not TECHNIQUE/SCENARIO (techniques: %s; scenarios: %s)",
			arg, strings.Join(techniqueNames(targets), ", "), strings.Join(strategytest.ScenarioNames(), ", "))
	}
	return best, scenario, nil
}

// runTrace is -trace: the one scenario on the one technique, its result
// line and its timeline.
func runTrace(ctx context.Context, cfg config, progress io.Writer) *Report {
	target := cfg.techniques[0]
	rep := &Report{Started: time.Now(), Backend: "addrs", Scenarios: cfg.scenarios,
		Settings: Settings{Addrs: cfg.addrs, Sentinels: cfg.sentinels, Masters: cfg.masters}}
	switch {
	case len(cfg.sentinels) > 0:
		rep.Backend = backendSentinel
	case len(cfg.addrs) == 0:
		rep.Backend = "harness"
	}
	fmt.Fprintf(progress, "lockcompare: tracing %s/%s\n", target.Name, cfg.scenarios[0])
	results, err := strategytest.Evaluate(ctx, target, strategytest.Options{
		Addrs: cfg.addrs, Sentinels: cfg.sentinels, Masters: cfg.masters, Scenarios: cfg.scenarios,
	})
	rep.Techniques = []Technique{{Name: target.Name, Nodes: max(target.Nodes, 1), Results: results}}
	markKnown(&rep.Techniques[0], cfg.known)
	rep.Interrupted = err != nil || ctx.Err() != nil
	rep.Elapsed = time.Since(rep.Started)
	return rep
}

// writeTrace prints each result of rep on its line, then its timeline.
func writeTrace(w io.Writer, rep *Report) error {
	var b strings.Builder
	for _, t := range rep.Techniques {
		for _, r := range t.Results {
			b.WriteString(r.String() + "\n")
			writeTimeline(&b, r.Timeline)
		}
	}
	writeFindings(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTimeline prints tl as the HTML report draws it: one line per event
// in order, ms on the scenario's clock first, a line where two clients
// start to overlap, then each client's held intervals and the overlaps.
func writeTimeline(w io.Writer, tl *strategytest.Timeline) {
	if tl == nil {
		fmt.Fprintln(w, "  (no timeline: the scenario did not run)")
		return
	}
	fmt.Fprintf(w, "TIMELINE  ms since the scenario began; lanes: %s, Redis\n", strings.Join(tl.Clients, ", "))
	for _, row := range seqRows(tl) {
		text := row.text
		if row.event != nil {
			text = row.event.Text()
		}
		fmt.Fprintf(w, "%10s  %s\n", msText3(row.at), text)
	}
	if tl.Dropped > 0 {
		fmt.Fprintf(w, "%10s  … %d more events not recorded: a timeline keeps its first %d\n", "", tl.Dropped, strategytest.MaxEvents)
	}
	fmt.Fprintf(w, "HELD  when each client believed it held the lock, ms\n")
	if len(tl.Held) == 0 {
		fmt.Fprintln(w, "  nobody")
	}
	for _, h := range tl.Held {
		end := msText3(h.To)
		if h.Open {
			end += " (the end of the scenario, and still believed held)"
		}
		fmt.Fprintf(w, "  %-8s %s - %s\n", h.Client, msText3(h.From), end)
	}
	for _, o := range tl.Overlaps {
		fmt.Fprintf(w, "OVERLAP  %s and %s both believed they held the lock %s - %s ms (%s)\n", o.A, o.B, msText3(o.From), msText3(o.To), roundDur(o.To-o.From))
	}
}

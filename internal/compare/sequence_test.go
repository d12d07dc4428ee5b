package compare

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// staleTimeline is set_nx_ex's stale DEL as the suite records it: A is
// stopped in its release, its lease runs out, B takes the lock, A's DEL
// removes it and C takes it while B still believes it holds.
func staleTimeline() *strategytest.Timeline {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return &strategytest.Timeline{
		Clients: []string{"A", "B", "C"},
		Events: []strategytest.Event{
			{At: ms(0), Kind: strategytest.EventCall, Client: "A", Op: "Lock", Args: "stale"},
			{At: ms(0.3), Kind: strategytest.EventCommand, Client: "A", Op: "SET", Args: "lock:stale aaaa… NX EX 1", Result: "OK"},
			{At: ms(0.4), Kind: strategytest.EventReturn, Client: "A", Op: "Lock", Result: "a lease (token aaaa…)"},
			{At: ms(0.5), Kind: strategytest.EventCall, Client: "A", Op: "Unlock", Args: "stale"},
			{At: ms(0.6), Kind: strategytest.EventFault, Client: "A", Op: "set_nx_ex/release:after-get", Result: "stopped"},
			{At: ms(0.7), Kind: strategytest.EventCommand, Client: "B", Op: "SET", Args: "lock:stale bbbb… NX EX 1", Result: "nil", Repeats: 250, Until: ms(500)},
			{At: ms(1000), Kind: strategytest.EventExpiry, Client: "A", Op: "TTL 1s", Result: "Redis expires its key about now"},
			{At: ms(1001), Kind: strategytest.EventReturn, Client: "B", Op: "Lock", Result: "a lease (token bbbb…)"},
			{At: ms(1001.2), Kind: strategytest.EventFault, Client: "A", Op: "set_nx_ex/release:after-get", Result: "resumed"},
			{At: ms(1001.3), Kind: strategytest.EventCommand, Client: "A", Op: "DEL", Args: "lock:stale", Result: "1"},
			{At: ms(1001.5), Kind: strategytest.EventReturn, Client: "C", Op: "TryLock", Result: "a lease (token cccc…)"},
			{At: ms(1001.6), Kind: strategytest.EventNote, Op: "the primary dies"},
		},
		Held: []strategytest.Interval{
			{Client: "A", From: ms(0.4), To: ms(0.5)},
			{Client: "B", From: ms(1001), To: ms(1002), Open: true},
			{Client: "C", From: ms(1001.5), To: ms(1001.9)},
		},
		Overlaps: []strategytest.Overlap{{A: "B", B: "C", From: ms(1001.5), To: ms(1001.9)}},
		End:      ms(1002),
	}
}

// drawnReport has a technique whose name holds "/", a result with a
// timeline, one without (not applicable) and a technique that shares an
// id-unsafe spelling with another.
func drawnReport() *Report {
	rep := brokenReport()
	rep.Scenarios = []string{"mutual-exclusion", "owner-safe-release", "node-fault"}
	rep.Techniques[0].Name = "getset_timestamp/method1"
	rep.Techniques[1].Name = "getset_timestamp.method1"
	for i := range rep.Techniques {
		t := &rep.Techniques[i]
		for j := range t.Results {
			t.Results[j].Technique = t.Name
			t.Results[j].Timeline = staleTimeline()
		}
		t.Results = append(t.Results, strategytest.Result{Technique: t.Name, Scenario: "node-fault", Property: "NodeFaultTolerant", Verdict: strategytest.NotApplicable, Account: "skipped: needs managed nodes"})
	}
	return rep
}

// TestEveryResultDrawn: the HTML report has one drawing per scenario
// result, every GUARANTEES cell links to its own, and a drawing shows the
// recorded lanes, held intervals and overlaps.
func TestEveryResultDrawn(t *testing.T) {
	locktest.NoLeaks(t)
	rep := drawnReport()
	root := writeParsed(t, rep)
	figures := checkDrawings(t, root, rep)
	fig := figures["getset_timestamp/method1/owner-safe-release"]
	if fig == nil {
		t.Fatalf("no drawing of getset_timestamp/method1/owner-safe-release")
	}
	tl := staleTimeline()
	var lanes []string
	for _, e := range fig.find(hasClass("text", "lane")) {
		lanes = append(lanes, e.text.String())
	}
	if got, want := strings.Join(lanes, ","), strings.Join(append(tl.Clients, "Redis"), ","); got != want {
		t.Errorf("drawing's lanes = %s, want %s", got, want)
	}
	if got := len(fig.find(hasClass("rect", "held"))); got != len(tl.Held) {
		t.Errorf("drawing has %d held bars, want %d", got, len(tl.Held))
	}
	if got := len(fig.find(hasClass("rect", "open"))); got != 1 {
		t.Errorf("drawing has %d open held bars, want 1 (B's)", got)
	}
	if got := len(fig.find(hasClass("rect", "overlap"))); got != len(tl.Overlaps) {
		t.Errorf("drawing has %d overlap bands, want %d", got, len(tl.Overlaps))
	}
	if got := len(fig.find(hasClass("line", "cmd"))); got != 3 {
		t.Errorf("drawing has %d command arrows, want 3", got)
	}
	text := fig.text.String()
	for _, e := range tl.Events {
		if !strings.Contains(text, e.Text()) {
			t.Errorf("drawing lacks the event %q", e.Text())
		}
	}
	if !strings.Contains(text, "⋯ 500 ms later") {
		t.Errorf("drawing does not mark the half second in which nothing happened:\n%s", text)
	}
	na := figures["getset_timestamp/method1/node-fault"]
	if na == nil || !strings.Contains(na.text.String(), "nothing recorded: skipped: needs managed nodes") {
		t.Errorf("the not-applicable result's drawing does not say it recorded nothing")
	}
}

// checkDrawings checks that root draws each result of rep once, in a
// figure whose id the result's GUARANTEES cell links to, and returns the
// figures by TECHNIQUE/SCENARIO.
func checkDrawings(t *testing.T, root *element, rep *Report) map[string]*element {
	t.Helper()
	ids := map[string]*element{}
	validID := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)
	for _, e := range root.find(func(e *element) bool { return e.attrs["id"] != "" }) {
		id := e.attrs["id"]
		if ids[id] != nil {
			t.Errorf("id %q is used twice", id)
		}
		if !validID.MatchString(id) {
			t.Errorf("id %q has characters a fragment would need to escape", id)
		}
		ids[id] = e
	}
	results := 0
	for _, tt := range rep.Techniques {
		results += len(tt.Results)
	}
	figs := root.find(hasClass("figure", "seq"))
	if len(figs) != results {
		t.Errorf("HTML has %d drawings, want one per scenario result, %d", len(figs), results)
	}
	for _, fig := range figs {
		if n := len(fig.find(hasClass("svg", "seq"))); n != 1 {
			t.Errorf("drawing %s has %d SVGs, want 1", fig.attrs["id"], n)
		}
	}
	byName := map[string]*element{}
	matrix := root.find(hasClass("table", "matrix"))[0]
	for i, tr := range matrix.find(named("tr"))[1:] {
		tech := rep.Techniques[i]
		for j, td := range tr.find(named("td"))[1:] {
			links := td.find(named("a"))
			if len(links) != 1 {
				t.Errorf("%s/%s cell has %d links, want 1", tech.Name, rep.Scenarios[j], len(links))
				continue
			}
			href := links[0].attrs["href"]
			fig := ids[strings.TrimPrefix(href, "#")]
			if !strings.HasPrefix(href, "#") || fig == nil || fig.name != "figure" {
				t.Errorf("%s/%s cell links to %q, want a drawing's id", tech.Name, rep.Scenarios[j], href)
				continue
			}
			name := tech.Name + "/" + rep.Scenarios[j]
			if !strings.Contains(fig.text.String(), tech.Name+" · "+rep.Scenarios[j]) {
				t.Errorf("%s cell links to the drawing %s, which is not its own", name, href)
			}
			byName[name] = fig
		}
	}
	return byName
}

// TestTraceText: -trace's text has each event on its line, the overlap
// marked where it starts, and the held intervals.
func TestTraceText(t *testing.T) {
	locktest.NoLeaks(t)
	var b strings.Builder
	writeTimeline(&b, staleTimeline())
	out := b.String()
	for _, want := range []string{
		"lanes: A, B, C, Redis",
		"    1000.0  A's lease ran out (TTL 1s): Redis expires its key about now",
		"       0.7  B -> SET lock:stale bbbb… NX EX 1 <- nil, and 250 times more over 499.3ms",
		"    1001.5  ⚠ B and C both hold the lock",
		"  B        1001.0 - 1002.0 (the end of the scenario, and still believed held)",
		"OVERLAP  B and C both believed they held the lock 1001.5 - 1001.9 ms (0.40 ms)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline text lacks %q:\n%s", want, out)
		}
	}
}

// TestParseTrace: -trace's TECHNIQUE/SCENARIO splits where a known
// technique leaves a known scenario, whatever "/" the name holds.
func TestParseTrace(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		arg, technique, scenario string
	}{
		{"getset_timestamp/method1/owner-safe-release", "getset_timestamp/method1", "owner-safe-release"},
		{"getset_timestamp/method2/mutual-exclusion", "getset_timestamp/method2", "mutual-exclusion"},
		{"getset_timestamp/fencing", "getset_timestamp", "fencing"},
		{"redlock/clock-skew", "redlock", "clock-skew"},
		{"getset_timestamp/method1", "", ""},
		{"set_nx_ex/nope", "", ""},
		{"set_nx_ex", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			target, scenario, err := parseTrace(tt.arg, techniques.All())
			if tt.technique == "" {
				if err == nil {
					t.Errorf("parseTrace(%q) = %s, %s; want an error", tt.arg, target.Name, scenario)
				}
				return
			}
			if err != nil || target.Name != tt.technique || scenario != tt.scenario {
				t.Errorf("parseTrace(%q) = %q, %q, %v; want %q, %q, nil", tt.arg, target.Name, scenario, err, tt.technique, tt.scenario)
			}
		})
	}
}

package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// runBound caps one end-to-end run.
const runBound = 5 * time.Minute

// runCommand runs lockcompare with args and returns its exit status,
// stdout and stderr.
func runCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, techniques.All(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestEndToEnd runs every scenario and every benchmark on every technique,
// with short measurements, and checks the three outputs: every technique
// has a verdict for every scenario and every measurement, the text tables
// name each technique in each table, and the HTML report parses and shows
// the matrix and both charts with nothing fetched from elsewhere.
func TestEndToEnd(t *testing.T) {
	locktest.NoLeaks(t)
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html")
	start := time.Now()
	code, stdout, stderr := runCommand(t, "-bench", "200ms", "-workers", "4", "-contenders", "3", "-json", jsonPath, "-html", htmlPath)
	t.Logf("lockcompare took %v", time.Since(start))
	if code != exitOK {
		t.Fatalf("run() = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)
	}
	rep := readReport(t, jsonPath)
	checkReport(t, rep)
	checkText(t, stdout, rep)
	checkHTML(t, htmlPath, rep)
}

func readReport(t *testing.T, path string) Report {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read -json output: %v", err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("-json output does not parse: %v", err)
	}
	return rep
}

// checkReport: every technique once, every scenario once per technique,
// every measurement present.
func checkReport(t *testing.T, rep Report) {
	t.Helper()
	scenarios := strategytest.ScenarioNames()
	if !equal(rep.Scenarios, scenarios) {
		t.Errorf("report scenarios = %v, want %v", rep.Scenarios, scenarios)
	}
	got := map[string]Technique{}
	for _, tech := range rep.Techniques {
		if _, dup := got[tech.Name]; dup {
			t.Errorf("technique %s reported twice", tech.Name)
		}
		got[tech.Name] = tech
	}
	for _, target := range techniques.All() {
		tech, ok := got[target.Name]
		if !ok {
			t.Errorf("technique %s missing from the report", target.Name)
			continue
		}
		seen := map[string]int{}
		for _, r := range tech.Results {
			seen[r.Scenario]++
			if r.Technique != target.Name || r.Verdict == "" {
				t.Errorf("%s/%s: Technique %q, Verdict %q; want %q and a verdict", target.Name, r.Scenario, r.Technique, r.Verdict, target.Name)
			}
		}
		for _, s := range scenarios {
			if seen[s] != 1 {
				t.Errorf("%s has %d results for scenario %s, want 1", target.Name, seen[s], s)
			}
		}
		if tech.Speed == nil || tech.Speed.Ops <= 0 {
			t.Errorf("%s: uncontended speed = %+v, want ops > 0", target.Name, tech.Speed)
		}
		if c := tech.Cost; c == nil || c.RedisMicrosPerPair <= 0 || c.AllocsPerPair <= 0 {
			t.Errorf("%s: uncontended cost = %+v, want Redis µs and allocs per pair > 0", target.Name, c)
		}
		if multi := target.Nodes > 1; multi != (tech.Frozen != nil) || (multi && tech.Frozen.Ops <= 0) {
			t.Errorf("%s (%d nodes): frozen-node speed = %+v, want ops > 0 exactly for multi-node techniques", target.Name, target.Nodes, tech.Frozen)
		}
		if tech.Trips == nil || tech.Trips.Acquire < 1 || tech.Trips.Release < 1 {
			t.Errorf("%s: round trips = %+v, want at least 1 each way", target.Name, tech.Trips)
		}
		want := rep.Settings.Workload.Workers * rep.Settings.Workload.Sections
		for mode, c := range map[string]*bench.Contention{"apart": tech.Apart, "shared": tech.Shared} {
			if c == nil || c.Sections != want || c.Utilisation <= 0 {
				t.Errorf("%s: contended %s = %+v, want %d sections and utilisation > 0", target.Name, mode, c, want)
			}
		}
		if len(tech.Crowds) != len(rep.Settings.Crowds) {
			t.Errorf("%s: %d many-contenders runs, want %d (%v)", target.Name, len(tech.Crowds), len(rep.Settings.Crowds), rep.Settings.Crowds)
		}
		for i, c := range tech.Crowds {
			w := bench.CrowdWorkload(rep.Settings.Crowds[i])
			if c.Contenders != w.Workers || c.Contention.Sections != w.Workers*w.Sections || c.RedisMicrosPerSection <= 0 {
				t.Errorf("%s: many contenders = %+v, want %d contenders, %d sections and Redis µs per section > 0", target.Name, c, w.Workers, w.Workers*w.Sections)
			}
		}
	}
	if rep.Raw.Speed == nil || rep.Raw.Speed.Ops <= 0 || len(rep.Raw.Runs) != 2 {
		t.Errorf("raw ceiling = %+v from %d runs (%s), want ops > 0 from 2 runs", rep.Raw.Speed, len(rep.Raw.Runs), rep.Raw.Error)
	}
	if c := rep.Raw.Cost; c == nil || c.RedisMicrosPerPair <= 0 {
		t.Errorf("raw ceiling cost = %+v, want Redis µs per pair > 0", c)
	}
	for _, r := range rep.Raw.Runs {
		if r.OpsPerSec > rep.Raw.Speed.OpsPerSec {
			t.Errorf("raw ceiling %v ops/s is below one of its runs, %v", rep.Raw.Speed.OpsPerSec, r.OpsPerSec)
		}
	}
}

// checkText: the three tables each have a row per technique, the
// many-contenders rows one per technique and crowd, the REDLOCK table one
// per multi-node technique, and the speed table the raw row.
func checkText(t *testing.T, out string, rep Report) {
	t.Helper()
	for _, heading := range []string{"GUARANTEES", "SPEED", "CONTENDED", "REDLOCK"} {
		if !strings.Contains(out, heading) {
			t.Errorf("text output lacks the %s table:\n%s", heading, out)
		}
	}
	if !strings.Contains(out, RawName+" ") {
		t.Errorf("text output lacks the %q row", RawName)
	}
	rows := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(line, " "); ok {
			rows[name]++
		}
	}
	for _, target := range techniques.All() {
		want := 3 + len(rep.Settings.Crowds) // and a many-contenders row per crowd
		if target.Nodes > 1 {
			want++ // and REDLOCK's
		}
		if rows[target.Name] != want {
			t.Errorf("text output has %d rows for %s, want %d (one per table):\n%s", rows[target.Name], target.Name, want, out)
		}
	}
	for _, r := range rep.Techniques[0].Results {
		if !strings.Contains(out, r.Property) {
			t.Errorf("guarantees table lacks the %s column", r.Property)
		}
	}
}

// checkHTML: the report parses as XHTML, its matrix has a row per
// technique with a cell per scenario, it has both charts, and it loads
// nothing from anywhere.
func checkHTML(t *testing.T, path string, rep Report) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read -html output: %v", err)
	}
	root := parseXHTML(t, data)
	matrices := root.find(hasClass("table", "matrix"))
	if len(matrices) != 1 {
		t.Fatalf("HTML has %d guarantees matrices, want 1", len(matrices))
	}
	rows := matrices[0].find(named("tr"))
	names := map[string]bool{}
	for _, tr := range rows[1:] { // the first row is the header
		cells := tr.find(named("td"))
		if len(cells) != 1+len(rep.Scenarios) {
			t.Errorf("matrix row %q has %d cells, want %d", cells[0].text.String(), len(cells), 1+len(rep.Scenarios))
		}
		names[cells[0].text.String()] = true
	}
	redlockRows := map[string]bool{}
	for _, table := range root.find(hasClass("table", "redlock")) {
		for _, tr := range table.find(named("tr"))[1:] {
			redlockRows[tr.find(named("td"))[0].text.String()] = true
		}
	}
	for _, target := range techniques.All() {
		if multi := target.Nodes > 1; redlockRows[target.Name] != multi {
			t.Errorf("HTML Redlock table has a row for %s (%d nodes): %v, want %v", target.Name, target.Nodes, redlockRows[target.Name], multi)
		}
	}
	for _, target := range techniques.All() {
		if !names[target.Name] {
			t.Errorf("HTML matrix has no row for %s", target.Name)
		}
	}
	if svgs := root.find(func(e *element) bool { return e.name == "svg" && e.attrs["class"] != "seq" }); len(svgs) != 2 {
		t.Errorf("HTML has %d SVG charts, want 2", len(svgs))
	}
	checkDrawings(t, root, &rep)
	bars := root.find(named("rect"))
	if want := len(techniques.All()) * 5; len(bars) < want { // 1 speed + 2x2 contended bars each
		t.Errorf("HTML charts have %d bars, want at least %d", len(bars), want)
	}
	if refs := root.find(hasClass("line", "ref")); len(refs) != 1 {
		t.Errorf("speed chart has %d ceiling lines, want 1", len(refs))
	}
	for _, e := range root.find(func(e *element) bool { return true }) {
		switch e.name {
		case "script", "link", "img", "iframe", "object", "embed", "image", "use":
			t.Errorf("HTML report has a <%s> element; it must be self-contained", e.name)
		}
		for name, v := range e.attrs {
			if name == "src" || (name == "href" && !strings.HasPrefix(v, "#")) {
				t.Errorf("<%s %s=%q>: the report must not load anything", e.name, name, v)
			}
		}
	}
	if strings.Contains(string(data), "url(") || strings.Contains(string(data), "@import") {
		t.Errorf("HTML report's CSS refers to an outside resource")
	}
}

// TestAddrs runs on an existing server: the scenarios that kill or freeze
// nodes are skipped, the rest run, -json - puts only JSON on stdout, and
// the run leaves the server's keyspace as it found it: no lock, no counter,
// no resource, no fencing counter, nothing.
func TestAddrs(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	before := allKeys(t, node)
	code, stdout, stderr := runCommand(t, "-addrs", node.Addr(), "-techniques", "lua_release", "-bench", "100ms", "-workers", "2", "-json", "-")
	require.Equal(t, exitOK, code, "run() exit status; stderr:\n%s", stderr)
	var rep Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "stdout with -json - is not JSON:\n%s", stdout)
	require.Equal(t, "addrs", rep.Backend, "Backend")
	require.Len(t, rep.Techniques, 1, "techniques in the report")
	results := rep.Techniques[0].Results
	require.Len(t, results, len(strategytest.ScenarioNames()), "lua_release's results: one per scenario")
	for _, r := range results {
		na := r.Verdict == strategytest.NotApplicable
		wantNA := r.Scenario == "node-fault" || r.Scenario == "sentinel-failover"
		assert.Equal(t, wantNA, na, "%s on -addrs: %s (%s); want not applicable only for node-fault and sentinel-failover", r.Scenario, r.Verdict, r.Account)
		if na {
			assert.Equal(t, "skipped: needs managed nodes", r.Account, "%s account", r.Scenario)
		}
	}
	assert.Contains(t, stderr, "GUARANTEES", "with -json - the tables should go to stderr")
	assert.Equal(t, before, allKeys(t, node), "the server's keys after the run, want those before it: the run must leave nothing behind")
}

// TestAddrsInterrupted interrupts a run on an existing server once the
// suite has written keys there: the run must still remove them all.
func TestAddrsInterrupted(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	before := allKeys(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() { // ends when Run returns: it stops when runCtx ends
		done <- Run(runCtx, techniques.All(), []string{"-addrs", node.Addr(), "-techniques", "lua_release", "-scenarios", "mutual-exclusion,fencing", "-bench", "100ms", "-workers", "2"}, &stdout, &stderr)
	}()
	require.Eventually(t, func() bool {
		reply, err := redis.Values(node.Do("SCAN", 0, "MATCH", "lockzoo-suite:*", "COUNT", 1000))
		var cursor string
		var keys []string
		if err == nil {
			_, err = redis.Scan(reply, &cursor, &keys)
		}
		return err == nil && len(keys) > 0
	}, runBound/2, 5*time.Millisecond, "the suite never wrote a key to the server")
	interrupt()
	select {
	case code := <-done:
		assert.Equal(t, exitProblems, code, "exit status of an interrupted run; stderr:\n%s", stderr.String())
	case <-ctx.Done():
		require.FailNow(t, "the interrupted run did not end", "stderr:\n%s", stderr.String())
	}
	assert.Equal(t, before, allKeys(t, node), "the server's keys after the interrupted run, want those before it")
}

// allKeys returns every key on node, sorted (SCAN over the whole keyspace).
func allKeys(t *testing.T, node *redistest.Node) []string {
	t.Helper()
	var keys []string
	cursor := "0"
	for {
		reply, err := redis.Values(node.Do("SCAN", cursor, "COUNT", 1000))
		require.NoError(t, err, "SCAN %s", cursor)
		var page []string
		_, err = redis.Scan(reply, &cursor, &page)
		require.NoError(t, err, "SCAN reply")
		keys = append(keys, page...)
		if cursor == "0" {
			break
		}
	}
	slices.Sort(keys)
	return keys
}

func equal(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

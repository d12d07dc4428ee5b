package check

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestSingleNodeFindings configures one node per hazard of the memory and
// persistence families and asserts the finding, what it breaks and the
// exit status.
func TestSingleNodeFindings(t *testing.T) {
	t.Parallel()
	persist := []redistest.Option{redistest.WithPersistence()}
	tests := []struct {
		name    string
		opts    []redistest.Option
		config  []any // CONFIG SET arguments
		family  string
		status  Status
		value   string   // the finding's value contains it
		prop    string   // the property broken
		victims []string // the techniques whose prop breaks
		exit    int
	}{
		{"allkeys-lru", persist, []any{"maxmemory", "100mb", "maxmemory-policy", "allkeys-lru"},
			FamilyEviction, Hazard, "maxmemory-policy allkeys-lru", MutualExclusion, allTechniques(), ExitHazard},
		{"volatile-lru", persist, []any{"maxmemory", "100mb", "maxmemory-policy", "volatile-lru"},
			FamilyEviction, Hazard, "maxmemory-policy volatile-lru", MutualExclusion, withTTL(), ExitHazard},
		{"allkeys-lfu", persist, []any{"maxmemory", "100mb", "maxmemory-policy", "allkeys-lfu"},
			FamilyEviction, Hazard, "allkeys-lfu", MutualExclusion, allTechniques(), ExitHazard},
		{"noeviction with a limit", persist, []any{"maxmemory", "100mb", "maxmemory-policy", "noeviction"},
			FamilyEviction, Note, "% used), maxmemory-policy noeviction", MutualExclusion, nil, ExitClean},
		{"lru without a limit", persist, []any{"maxmemory-policy", "allkeys-lru"},
			FamilyEviction, Note, "maxmemory 0, maxmemory-policy allkeys-lru", MutualExclusion, nil, ExitClean},
		{"no persistence", nil, nil,
			FamilyPersistence, Hazard, `appendonly no, save ""`, NodeFaultTolerant, []string{redlock}, ExitHazard},
		{"snapshots only", nil, []any{"save", "3600 1"},
			FamilyPersistence, Hazard, `appendonly no, save "3600 1"`, NodeFaultTolerant, []string{redlock}, ExitHazard},
		{"appendfsync everysec", persist, []any{"appendfsync", "everysec"},
			FamilyPersistence, Hazard, "appendonly yes, appendfsync everysec", NodeFaultTolerant, []string{redlock}, ExitHazard},
		{"appendfsync always", persist, nil,
			FamilyPersistence, OK, "appendonly yes, appendfsync always", NodeFaultTolerant, nil, ExitClean},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Start(t, 1, tc.opts...)[0]
			if tc.config != nil {
				configure(t, node, tc.config...)
			}
			rep, code := runJSON(t, "-addrs", node.Addr())
			f := findingOf(t, rep, node.Addr(), tc.family)
			if f.Status != tc.status {
				t.Errorf("%s status = %s, want %s (finding %+v)", tc.family, f.Status, tc.status, f)
			}
			mustContain(t, tc.family+" value", f.Value, tc.value)
			if got := brokenBy(f, tc.prop); !slices.Equal(got, tc.victims) {
				t.Errorf("%s breaks %s of %v, want %v", tc.family, tc.prop, got, tc.victims)
			}
			if f.Status == Hazard && f.Change == "" {
				t.Errorf("hazard %+v says nothing to change", f)
			}
			if code != tc.exit {
				t.Errorf("exit status %d, want %d (findings %+v)", code, tc.exit, rep.Findings)
			}
			assertEmpty(t, node)
		})
	}
}

// TestCleanNode: noeviction, appendonly yes with appendfsync always, no
// replicas, every right: every finding is ok and the check exits 0, in
// text and in JSON.
func TestCleanNode(t *testing.T) {
	t.Parallel()
	node := redistest.Start(t, 1, redistest.WithPersistence())[0]
	configure(t, node, "maxmemory-policy", "noeviction")

	rep, code := runJSON(t, "-addrs", node.Addr())
	if code != ExitClean {
		t.Errorf("exit status %d, want %d", code, ExitClean)
	}
	families := []string{FamilyEviction, FamilyPersistence, FamilyReplication, FamilyVersion, FamilyCluster, FamilyAccess}
	if len(rep.Findings) != len(families) {
		t.Errorf("%d findings, want %d (one per family): %+v", len(rep.Findings), len(families), rep.Findings)
	}
	for _, fam := range families {
		if f := findingOf(t, rep, node.Addr(), fam); f.Status != OK || len(f.Breaks) > 0 {
			t.Errorf("%s: %+v, want ok breaking nothing", fam, f)
		}
	}
	assertEmpty(t, node)

	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"-addrs", node.Addr()}, &out, &errOut); code != ExitClean {
		t.Errorf("text run: exit status %d, want %d; stderr %q", code, ExitClean, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"CHECK  prefix \"lock:\"", "address", "eviction", "ok", "maxmemory-policy noeviction", "RESULT  0 hazard(s)", "exit status 0"} {
		mustContain(t, "text output", text, want)
	}
	if strings.Contains(text, "DETAILS") {
		t.Errorf("text output of a clean node has DETAILS:\n%s", text)
	}
}

// TestUnreachable: an address nobody listens on makes the check exit 2,
// and the other addresses are still checked.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	node := redistest.Start(t, 1, redistest.WithPersistence())[0]
	dead := redistest.Start(t, 1)[0]
	dead.Kill()
	rep, code := runJSON(t, "-addrs", node.Addr()+","+dead.Addr())
	if code != ExitCannot {
		t.Errorf("exit status %d, want %d", code, ExitCannot)
	}
	if len(rep.Unreachable) != 1 || !strings.Contains(rep.Unreachable[0], dead.Addr()) {
		t.Errorf("unreachable = %q, want one entry naming %s", rep.Unreachable, dead.Addr())
	}
	if f := findingOf(t, rep, node.Addr(), FamilyEviction); f.Status != OK {
		t.Errorf("the reachable node's eviction finding = %+v, want ok", f)
	}
}

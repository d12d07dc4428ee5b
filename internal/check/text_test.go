package check

import (
	"strings"
	"testing"
)

// TestBreaksText groups the broken properties as the table shows them.
func TestBreaksText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		breaks []Break
		want   string
	}{
		{"none", nil, "-"},
		{"every technique", breaking(allTechniques(), MutualExclusion), "MutualExclusion: every technique"},
		{"some", breaking(withTTL(), MutualExclusion), "MutualExclusion: setnx_expire, watch_multi, set_nx_ex, lua_release, redlock"},
		{"two groups", append(breaking(scripted(), Runs), Break{Technique: redlock, Properties: []string{NodeFaultTolerant}}),
			"Runs: lua_release, redlock; NodeFaultTolerant: redlock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := breaksText(tc.breaks); got != tc.want {
				t.Errorf("breaksText = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWriteText: a hazard shows in capitals in the table and whole under
// DETAILS, with what it breaks and what to change; ok findings have no
// details.
func TestWriteText(t *testing.T) {
	t.Parallel()
	rep := &Report{Prefix: "lock:", Addrs: []string{"h:1"}, Exit: ExitHazard, Findings: []Finding{
		{Addr: "h:1", Hazard: FamilyEviction, Status: Hazard, Value: "maxmemory 1, maxmemory-policy allkeys-lru",
			Breaks: breaking(allTechniques(), MutualExclusion), Why: "evicts held locks", Change: "noeviction"},
		{Addr: "h:1", Hazard: FamilyVersion, Status: OK, Value: "redis_version 7.0.15, " + strings.Repeat("x", 100)},
	}}
	var b strings.Builder
	if err := writeText(&b, rep); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"h:1      eviction  HAZARD  maxmemory 1, maxmemory-policy allkeys-lru",
		"MutualExclusion: every technique",
		"DETAILS (1)\n  h:1 eviction HAZARD\n",
		"    change: noeviction\n",
		"…",
		"RESULT  1 hazard(s), 0 unknown, 0 note(s), 1 ok: exit status 1",
	} {
		mustContain(t, "text", text, want)
	}
	if strings.Contains(text, "h:1 version") {
		t.Errorf("an ok finding got details:\n%s", text)
	}
}

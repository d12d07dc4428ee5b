package check

import (
	"slices"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestVersion checks a node with all the commands, and nodes where some
// are renamed away (rename-command NAME ""), as managed services do.
func TestVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		renamed []string
		status  Status
		value   string
		victims []string // Runs
	}{
		{"every command", nil, OK, "all 19 commands known", nil},
		{"no GETSET", []string{"GETSET"}, Hazard, "unknown commands: GETSET", []string{getsetTimestamp}},
		{"no CLIENT", []string{"CLIENT"}, Hazard, "unknown commands: CLIENT", []string{redlock}},
		{"no EVALSHA", []string{"EVALSHA"}, Hazard, "unknown commands: EVALSHA", scripted()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var flags []string
			for _, c := range tc.renamed {
				flags = append(flags, "--rename-command", c, "")
			}
			node := redistest.Start(t, 1, redistest.WithPersistence(), redistest.WithFlags(flags...))[0]
			rep, code := runJSON(t, "-addrs", node.Addr())
			f := findingOf(t, rep, node.Addr(), FamilyVersion)
			if f.Status != tc.status {
				t.Errorf("version = %+v, want status %s", f, tc.status)
			}
			// The server the harness runs (LOCKZOO_REDIS_SERVER), named
			// with its own version; Valkey 8 reports redis_version 7.2.4
			// besides.
			mustContain(t, "version value", f.Value, harnessServer()+" ")
			mustContain(t, "version value", f.Value, map[string]string{"redis": "redis 7.", "valkey": "(redis_version 7."}[harnessServer()])
			mustContain(t, "version value", f.Value, tc.value)
			if got := brokenBy(f, Runs); !slices.Equal(got, tc.victims) {
				t.Errorf("breaks Runs of %v, want %v", got, tc.victims)
			}
			if want := map[bool]int{true: ExitHazard, false: ExitClean}[tc.status == Hazard]; code != want {
				t.Errorf("exit status %d, want %d", code, want)
			}
			assertEmpty(t, node)
		})
	}
}

// TestParseVersion reads versions and orders them.
func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		want      version
		oldScript bool // before minScriptVersion
		wantErr   bool
	}{
		{"7.0.15", version{7, 0, 15}, false, false},
		{"4.0.14", version{4, 0, 14}, true, false},
		{"5.0", version{5, 0, 0}, false, false},
		{"2.6.12", version{2, 6, 12}, true, false},
		{"seven", version{}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseVersion(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("parseVersion(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
			if err == nil && got.less(minScriptVersion()) != tc.oldScript {
				t.Errorf("%v before %v = %v, want %v", got, minScriptVersion(), !tc.oldScript, tc.oldScript)
			}
		})
	}
}

package check

import (
	"slices"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestReplication checks a primary with a replica, from each side, and the
// pair as redlock's masters.
func TestReplication(t *testing.T) {
	t.Parallel()
	primary := redistest.Start(t, 1, redistest.WithPersistence())[0]
	replica := primary.StartReplica()
	configure(t, primary, "min-replicas-to-write", "1")
	tests := []struct {
		name   string
		addr   string
		value  string
		prop   string
		broken []string
	}{
		{"primary", primary.Addr(), "role master, connected_slaves 1, min-replicas-to-write 1", NodeFaultTolerant, []string{redlock}},
		{"replica", replica.Addr(), "role replica of", Runs, allTechniques()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, code := runJSON(t, "-addrs", tc.addr)
			f := findingOf(t, rep, tc.addr, FamilyReplication)
			if f.Status != Hazard || code != ExitHazard {
				t.Errorf("replication = %+v, exit %d; want a hazard, exit %d", f, code, ExitHazard)
			}
			mustContain(t, "replication value", f.Value, tc.value)
			if got := brokenBy(f, tc.prop); !slices.Equal(got, tc.broken) {
				t.Errorf("breaks %s of %v, want %v", tc.prop, got, tc.broken)
			}
		})
	}
	t.Run("only lua_release", func(t *testing.T) {
		t.Parallel()
		// A failover is outside lua_release's claims: a note, exit 0.
		rep, code := runJSON(t, "-addrs", primary.Addr(), "-techniques", luaRelease)
		if f := findingOf(t, rep, primary.Addr(), FamilyReplication); f.Status != Note || len(f.Breaks) > 0 {
			t.Errorf("replication for lua_release alone = %+v, want a note breaking nothing", f)
		}
		if code != ExitClean {
			t.Errorf("exit status %d, want %d", code, ExitClean)
		}
	})
}

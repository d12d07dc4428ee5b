package check

import (
	"slices"
	"strconv"
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
		// A failover is outside lua_release's claims: a note, exit 0. Its
		// Lockers wait for none of the replicas: the note names the
		// setting to change.
		rep, code := runJSON(t, "-addrs", primary.Addr(), "-techniques", luaRelease)
		f := findingOf(t, rep, primary.Addr(), FamilyReplication)
		if f.Status != Note || len(f.Breaks) > 0 {
			t.Errorf("replication for lua_release alone = %+v, want a note breaking nothing", f)
		}
		mustContain(t, "replication change", f.Change, "strategy.Config.Replicas = 1")
		if code != ExitClean {
			t.Errorf("exit status %d, want %d", code, ExitClean)
		}
	})
	t.Run("lua_release waits for more replicas than there are", func(t *testing.T) {
		t.Parallel()
		rep, code := runJSON(t, "-addrs", primary.Addr(), "-techniques", luaRelease, "-replicas", "2")
		f := findingOf(t, rep, primary.Addr(), FamilyReplication)
		if got := brokenBy(f, Runs); f.Status != Hazard || !slices.Equal(got, []string{luaRelease}) || code != ExitHazard {
			t.Errorf("replication with -replicas 2 of 1 = %+v (Runs broken for %v), exit %d; want a hazard breaking lua_release's Runs, exit %d", f, got, code, ExitHazard)
		}
	})
}

// TestWaitFor: what the replication finding of a primary with 2 replicas
// says of lua_release for each strategy.Config.Replicas.
func TestWaitFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		want   int
		broken string // the lua_release property broken, "" none
		text   string // in Why or Change
	}{
		{0, "", "set strategy.Config.Replicas = 2"},
		{1, NodeFaultTolerant, "waits for 1 of the 2 replicas"},
		{2, "", "waits for all 2 replicas"},
		{3, Runs, "only 2 are connected"},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.want), func(t *testing.T) {
			t.Parallel()
			var f Finding
			waitFor(&f, "2", tc.want)
			var broken []string
			if tc.broken != "" {
				broken = []string{luaRelease}
			}
			if got := brokenBy(f, tc.broken); tc.broken != "" && !slices.Equal(got, broken) {
				t.Errorf("waitFor(2 replicas, Replicas %d) breaks %s of %v, want %v", tc.want, tc.broken, got, broken)
			}
			if tc.broken == "" && len(f.Breaks) != 0 {
				t.Errorf("waitFor(2 replicas, Replicas %d) breaks %v, want nothing", tc.want, f.Breaks)
			}
			mustContain(t, "why and change", f.Why+f.Change, tc.text)
		})
	}
}

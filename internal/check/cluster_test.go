package check

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestCluster checks the first master of a cluster under several
// prefixes: spread over the slots (a note: a pool to one node does not
// follow MOVED), a hash tag this master serves, one another master
// serves, and a prefix whose "{}" splits one lock's keys over several
// slots; and -cluster, which checks every master.
func TestCluster(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, redistest.WithPersistence())
	first := cluster.Masters()[0]
	here, there := tagServedBy(t, cluster, first, true), tagServedBy(t, cluster, first, false)
	tests := []struct {
		prefix string
		status Status
		value  string
		broken []string // Runs
		access Status
	}{
		{"lock:", Note, "locks under prefix \"lock:\" spread over every master", nil, OK},
		{here, OK, "every key under prefix", nil, OK},
		{there, Hazard, "every key under prefix", allTechniques(), Unknown},
		{"a{}", Hazard, "span", scripted(), Hazard},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			t.Parallel()
			rep, _ := runJSON(t, "-addrs", first.Addr(), "-prefix", tc.prefix)
			f := findingOf(t, rep, first.Addr(), FamilyCluster)
			if f.Status != tc.status {
				t.Errorf("cluster = %+v, want status %s", f, tc.status)
			}
			mustContain(t, "cluster value", f.Value, "cluster_enabled 1, this node serves 5461 of 16384 slots")
			mustContain(t, "cluster value", f.Value, tc.value)
			if got := brokenBy(f, Runs); !slices.Equal(got, tc.broken) {
				t.Errorf("breaks Runs of %v, want %v", got, tc.broken)
			}
			if a := findingOf(t, rep, first.Addr(), FamilyAccess); a.Status != tc.access {
				t.Errorf("access = %+v, want status %s", a, tc.access)
			}
		})
	}
	t.Run("-cluster of a node that is not a cluster's", func(t *testing.T) {
		t.Parallel()
		plain := redistest.Start(t, 1)[0]
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), []string{"-cluster", plain.Addr()}, &out, &errOut); code != ExitCannot {
			t.Errorf("check -cluster %s = exit %d, want %d (could not run)", plain.Addr(), code, ExitCannot)
		}
		mustContain(t, "stderr", errOut.String(), "not a Redis Cluster")
	})
	t.Run("-cluster checks every master", func(t *testing.T) {
		t.Parallel()
		rep, _ := runJSON(t, "-cluster", first.Addr(), "-prefix", "lock:")
		var want []string
		for _, m := range cluster.Masters() {
			want = append(want, m.Addr())
			findingOf(t, rep, m.Addr(), FamilyCluster)
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(rep.Addrs))
		if !slices.Equal(got, want) {
			t.Errorf("-cluster %s checked %v, want every master %v", first.Addr(), got, want)
		}
	})
	t.Cleanup(func() {
		for _, m := range cluster.Masters() {
			assertEmpty(t, m)
		}
	})
}

// tagServedBy returns a prefix "{tN}:" whose slot node serves (or, when
// served is false, another master serves).
func tagServedBy(t *testing.T, c *redistest.Cluster, node *redistest.Node, served bool) string {
	t.Helper()
	for i := range 100 {
		tag := fmt.Sprintf("{t%d}", i)
		if (c.NodeFor(tag) == node) == served {
			return tag + ":"
		}
	}
	t.Fatalf("no tag among 100 whose slot %v is served by %s", served, node.Addr())
	return ""
}

package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestIndependence gives the check sets of addresses as redlock's masters:
// one server twice, a primary and its replica, two masters of one cluster,
// and independent servers.
func TestIndependence(t *testing.T) {
	t.Parallel()
	persist := redistest.WithPersistence()
	nodes := redistest.Start(t, 3, persist)
	primary := redistest.Start(t, 1, persist)[0]
	replica := primary.StartReplica()
	cluster := redistest.StartCluster(t, persist).Masters()
	tests := []struct {
		name   string
		addrs  []string
		status Status
		value  string
		props  []string // redlock's broken properties
	}{
		{"same server", []string{nodes[0].Addr(), nodes[0].Addr(), nodes[1].Addr()}, Hazard, "are the same server", []string{MutualExclusion, NodeFaultTolerant}},
		{"primary and replica", []string{primary.Addr(), replica.Addr(), nodes[0].Addr()}, Hazard, "replicate one data set", []string{MutualExclusion, NodeFaultTolerant}},
		{"one cluster", []string{cluster[0].Addr(), cluster[1].Addr(), nodes[0].Addr()}, Hazard, "are nodes of one cluster", []string{Runs}},
		{"independent", []string{nodes[0].Addr(), nodes[1].Addr(), nodes[2].Addr()}, OK, "3 addresses", nil},
		{"two independent", []string{nodes[0].Addr(), nodes[1].Addr()}, Note, "2 addresses", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, _ := runJSON(t, "-addrs", strings.Join(tc.addrs, ","))
			f := findingOf(t, rep, "", FamilyIndependence)
			if f.Status != tc.status {
				t.Errorf("independence = %+v, want status %s", f, tc.status)
			}
			mustContain(t, "independence value", f.Value, tc.value)
			var got []string
			for _, b := range f.Breaks {
				if b.Technique != redlock {
					t.Errorf("independence breaks %s, want redlock only", b.Technique)
				}
				got = b.Properties
			}
			if !slices.Equal(got, tc.props) {
				t.Errorf("breaks redlock's %v, want %v", got, tc.props)
			}
		})
	}
}

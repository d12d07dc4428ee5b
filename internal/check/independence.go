package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// checkIndependence reports, for two addresses or more, whether they are
// independent masters as redlock needs: each a server of its own (distinct
// run_id), no replication between them (a replica shares its primary's
// master_replid), and not masters of one cluster (each lock key lives on
// one of them only). Two addresses of one server, or a primary and its
// replica, count one lock twice: a client can win a quorum while another
// holds the lock, and losing that server loses several votes at once.
func checkIndependence(ctx context.Context, nodes []*node) Finding {
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr())
	}
	f := Finding{Addr: strings.Join(addrs, ","), Hazard: FamilyIndependence, Setting: "run_id, master_replid, cluster node ids"}
	var problems, values []string
	breaks := map[string]bool{}
	for i, a := range nodes {
		for _, b := range nodes[i+1:] {
			p, err := related(ctx, a, b)
			if err != nil {
				f.Status, f.Value, f.Why = Unknown, "unknown", err.Error()
				return f
			}
			if p != "" {
				problems = append(problems, fmt.Sprintf("%s and %s %s", a.addr(), b.addr(), p))
				if strings.Contains(p, "cluster") {
					breaks[Runs] = true
				} else {
					breaks[MutualExclusion], breaks[NodeFaultTolerant] = true, true
				}
			}
		}
		id, _ := a.field("run_id")
		values = append(values, short(id))
	}
	f.Value = fmt.Sprintf("%d addresses, run_ids %s", len(nodes), strings.Join(values, ","))
	if len(problems) == 0 {
		if len(nodes) < 3 {
			f.Status = Note
			f.Why = fmt.Sprintf("independent, but redlock over %d masters needs every one of them (quorum %d): it tolerates the loss of none", len(nodes), len(nodes)/2+1)
			f.Change = "give redlock 3 or 5 independent masters"
			return f
		}
		f.Status = OK
		return f
	}
	var props []string
	for _, p := range []string{MutualExclusion, NodeFaultTolerant, Runs} {
		if breaks[p] {
			props = append(props, p)
		}
	}
	f.Status = Hazard
	f.Breaks = breaking([]string{redlock}, props...)
	f.Value += "; " + strings.Join(problems, "; ")
	f.Why = "redlock counts each address as an independent vote: one server, or a primary and its replica, behind two addresses votes twice and fails as one; masters of one cluster each hold only their slots' keys, so no lock reaches a quorum"
	f.Change = "give redlock independent masters: separate servers, no replication between them, no shared cluster (each may be a cluster of its own, reached through the master that serves the key)"
	return f
}

// related says how a and b depend on each other, "" when they do not.
func related(ctx context.Context, a, b *node) (string, error) {
	idA, errA := a.field("run_id")
	idB, errB := b.field("run_id")
	if errA != nil {
		return "", fmt.Errorf("%s: %w", a.addr(), errA)
	}
	if errB != nil {
		return "", fmt.Errorf("%s: %w", b.addr(), errB)
	}
	if idA == idB {
		return "are the same server (run_id " + short(idA) + ")", nil
	}
	replA, _ := a.field("master_replid")
	replB, _ := b.field("master_replid")
	if replA != "" && replA == replB {
		return "replicate one data set (master_replid " + short(replA) + ")", nil
	}
	ca, _ := a.clustered()
	cb, _ := b.clustered()
	if ca && cb {
		va, vb := a.readCluster(ctx), b.readCluster(ctx)
		if va.err != nil {
			return "", fmt.Errorf("%s: %w", a.addr(), va.err)
		}
		if vb.err != nil {
			return "", fmt.Errorf("%s: %w", b.addr(), vb.err)
		}
		if slices.Contains(va.ids, vb.myID) {
			return "are nodes of one cluster", nil
		}
	}
	return "", nil
}

// short abbreviates a 40-hex id for the report.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

package check

import "fmt"

// checkReplication reports the replication role, the connected replicas
// and min-replicas-to-write. Replication is asynchronous: a primary that
// fails over to a replica that had not yet received a lock loses it, and
// a second client takes it. min-replicas-to-write bounds the replicas' lag
// but does not close that window. For the single-node techniques a
// failover is the loss of their node, which they do not claim to survive;
// redlock counts each of its masters once and claims NodeFaultTolerant,
// which a failover that forgets a lock breaks. An address that is itself a
// replica refuses lockzoo's writes, or, when writable, keeps them apart
// from its primary and drops them at the next resync.
func checkReplication(n *node) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyReplication, Setting: "role, connected_slaves, min-replicas-to-write"}
	role, err := n.field("role")
	if err != nil {
		return unknown(n, FamilyReplication, f.Setting, err)
	}
	minWrite, err := n.setting("min-replicas-to-write")
	if err != nil {
		minWrite = "unknown (" + err.Error() + ")"
	}
	if role == "slave" {
		master, _ := n.field("master_host")
		port, _ := n.field("master_port")
		readOnly, err := n.setting("replica-read-only")
		if err != nil {
			return unknown(n, FamilyReplication, f.Setting, err)
		}
		f.Value = fmt.Sprintf("role replica of %s:%s, replica-read-only %s", master, port, readOnly)
		f.Status = Hazard
		f.Change = "point the service at the primary, not at a replica"
		if readOnly == "yes" {
			f.Why = "a replica refuses every write (READONLY): no lock can be taken"
			f.Breaks = breaking(allTechniques(), Runs)
		} else {
			f.Why = "a writable replica keeps the locks to itself: clients of the primary do not see them, and the next resync drops them"
			f.Breaks = breaking(allTechniques(), MutualExclusion)
		}
		return f
	}
	replicas, err := n.field("connected_slaves")
	if err != nil {
		return unknown(n, FamilyReplication, f.Setting, err)
	}
	f.Value = fmt.Sprintf("role %s, connected_slaves %s, min-replicas-to-write %s", role, replicas, minWrite)
	if replicas == "0" {
		f.Status = OK
		return f
	}
	f.Status = Hazard
	f.Breaks = breaking([]string{redlock}, NodeFaultTolerant, MutualExclusion)
	f.Why = "replication is asynchronous: a failover to a replica that had not received a lock loses it, and another client takes it (min-replicas-to-write bounds the lag, it does not close the window); the single-node techniques do not claim to survive a failover, and lose the lock the same way"
	f.Change = "for redlock, give it independent masters without automatic failover (or fail over only after the longest TTL); do not count on failover keeping a lock for any technique"
	return f
}

package check

import (
	"fmt"
	"strconv"
)

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
//
// want is the strategy.Config.Replicas of the service's lua_release
// Lockers (-replicas): see waitFor.
func checkReplication(n *node, want int) Finding {
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
	waitFor(&f, replicas, want)
	return f
}

// waitFor adds to the replication finding f of a primary with replicas
// (connected_slaves, as INFO gives it) what lua_release makes of them when
// its Lockers wait for want replicas (strategy.Config.Replicas, the
// -replicas flag): it waits for none (the finding names the setting), for
// fewer than there are (a failover may promote one that did not
// acknowledge, which breaks the NodeFaultTolerant it then claims), for
// more (no Lock succeeds), or for every one.
func waitFor(f *Finding, replicas string, want int) {
	n, err := strconv.Atoi(replicas)
	if err != nil {
		return
	}
	switch {
	case want == 0:
		f.Why += fmt.Sprintf("; the Lockers wait for none of the %d replicas", n)
		f.Change += fmt.Sprintf("; for lua_release, set strategy.Config.Replicas = %d so that every lease is acknowledged by every replica (WAIT) before it is granted, and let failover promote the most up-to-date replica (Sentinel does); then check with -replicas %d", n, n)
	case want < n:
		f.Breaks = append(f.Breaks, Break{Technique: luaRelease, Properties: []string{NodeFaultTolerant, MutualExclusion}})
		f.Why += fmt.Sprintf("; lua_release waits for %d of the %d replicas (strategy.Config.Replicas): a failover may promote one that did not acknowledge a granted lease", want, n)
		f.Change += fmt.Sprintf("; for lua_release, set strategy.Config.Replicas = %d, every replica", n)
	case want > n:
		f.Breaks = append(f.Breaks, Break{Technique: luaRelease, Properties: []string{Runs}})
		f.Why += fmt.Sprintf("; lua_release waits for %d replicas (strategy.Config.Replicas) and only %d are connected: every Lock fails with ErrNotReplicated", want, n)
		f.Change += fmt.Sprintf("; for lua_release, set strategy.Config.Replicas = %d, or connect the missing replicas", n)
	default:
		f.Why += fmt.Sprintf("; lua_release waits for all %d replicas (strategy.Config.Replicas): a failover that promotes the most up-to-date replica keeps every granted lease, one that may promote any replica does not", n)
	}
}

package check

import "fmt"

// checkPersistence reports appendonly, appendfsync and save. A node that
// restarts without the locks it held lets a second client take them. The
// single-node techniques do not claim to survive the loss of their node,
// so for them this is a note; redlock claims NodeFaultTolerant, and the
// Redlock specification keeps that claim only with appendfsync always or
// with restarts delayed by more than the longest TTL.
func checkPersistence(n *node) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyPersistence, Setting: "appendonly, appendfsync, save"}
	aof, err := n.setting("appendonly")
	if err != nil {
		return unknown(n, FamilyPersistence, f.Setting, err)
	}
	fsync, fsyncErr := n.setting("appendfsync")
	save, saveErr := n.setting("save")
	switch {
	case aof == "yes" && fsyncErr != nil:
		return unknown(n, FamilyPersistence, f.Setting, fsyncErr)
	case aof != "yes" && saveErr != nil:
		return unknown(n, FamilyPersistence, f.Setting, saveErr)
	}
	if aof == "yes" {
		f.Value = fmt.Sprintf("appendonly yes, appendfsync %s", fsync)
	} else {
		f.Value = fmt.Sprintf("appendonly no, save %q", save)
	}
	if aof == "yes" && fsync == "always" {
		f.Status = OK
		return f
	}
	f.Status = Hazard
	f.Breaks = breaking([]string{redlock}, NodeFaultTolerant, MutualExclusion)
	switch {
	case aof == "yes":
		f.Why = fmt.Sprintf("with appendfsync %s a crash loses the writes not yet on disk, the latest locks among them; a node that restarts without them lets another client win a quorum", fsync)
	case save != "":
		f.Why = "RDB snapshots only: a restart forgets every lock taken since the last snapshot, so another client can win a quorum"
	default:
		f.Why = "no persistence: a restart forgets every lock, so another client can win a quorum (single-node techniques lose the lock too, which they do not claim to survive)"
	}
	f.Change = "appendonly yes and appendfsync always, or restart a crashed node only after the longest lock TTL has passed (redlock's restart guard covers only Lockers that saw the node before)"
	return f
}

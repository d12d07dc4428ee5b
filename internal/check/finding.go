package check

import (
	"slices"
)

// Status is a finding's verdict.
type Status string

// The statuses a Finding takes.
const (
	// OK: the setting keeps every claim the techniques make.
	OK Status = "ok"
	// Hazard: the setting can break a property a technique claims (Breaks
	// names them); the check exits 1.
	Hazard Status = "hazard"
	// Note: worth knowing, but outside what the techniques claim (a
	// single-node technique never claims to survive a failover, say).
	Note Status = "note"
	// Unknown: the setting could not be read (Reason says why); the check
	// does not guess.
	Unknown Status = "unknown"
)

// Hazard families, one per file of this package.
const (
	FamilyEviction     = "eviction"
	FamilyPersistence  = "persistence"
	FamilyReplication  = "replication"
	FamilyVersion      = "version"
	FamilyCluster      = "cluster"
	FamilyAccess       = "access"
	FamilyIndependence = "independence"
)

// Properties a hazard can break: the strategy.Properties fields and the
// suite's MutualExclusion, plus Runs, which no technique states because
// every one needs it: the technique can take and release a lock at all.
const (
	MutualExclusion   = "MutualExclusion"
	NodeFaultTolerant = "NodeFaultTolerant"
	Runs              = "Runs"
)

// Break is one technique whose claimed properties a finding breaks.
type Break struct {
	Technique  string   `json:"technique"`  // as strategy.Properties.Name
	Properties []string `json:"properties"` // e.g. MutualExclusion, Runs
}

// Finding is what the check found about one hazard on one address (Addr
// is every address involved, comma-separated, for the independence of
// redlock's masters).
type Finding struct {
	Addr    string  `json:"addr"`
	Hazard  string  `json:"hazard"`  // a Family constant
	Status  Status  `json:"status"`  // ok, hazard, note or unknown
	Setting string  `json:"setting"` // what was read, e.g. "maxmemory-policy"
	Value   string  `json:"value"`   // its value as the server gave it
	Breaks  []Break `json:"breaks,omitempty"`
	Why     string  `json:"why,omitempty"`    // what goes wrong, or why it is unknown
	Change  string  `json:"change,omitempty"` // what to change
}

// breaking returns one Break per technique, each with props.
func breaking(techniques []string, props ...string) []Break {
	out := make([]Break, 0, len(techniques))
	for _, t := range techniques {
		out = append(out, Break{Technique: t, Properties: slices.Clone(props)})
	}
	return out
}

// only keeps the breaks of the techniques named in keep (all when keep is
// empty) and turns a hazard that then breaks nothing into a note.
func (f Finding) only(keep []string) Finding {
	if len(keep) == 0 {
		return f
	}
	var kept []Break
	for _, b := range f.Breaks {
		if slices.Contains(keep, b.Technique) {
			kept = append(kept, b)
		}
	}
	f.Breaks = kept
	if f.Status == Hazard && len(kept) == 0 {
		f.Status = Note
	}
	return f
}

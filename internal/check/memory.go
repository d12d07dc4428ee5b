package check

import (
	"fmt"
	"strconv"
	"strings"
)

// checkMemory reports maxmemory and maxmemory-policy. Any policy but
// noeviction lets Redis evict a held lock once the memory is full, and a
// second client then takes it: MutualExclusion breaks. The volatile-*
// policies evict only keys with an expiry, so the getset_timestamp family,
// whose keys have none, keeps its locks. With maxmemory 0 nothing is
// evicted (on 64-bit builds there is no limit).
func checkMemory(n *node) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyEviction, Setting: "maxmemory, maxmemory-policy"}
	policy, err := n.setting("maxmemory-policy")
	if err != nil {
		return unknown(n, FamilyEviction, f.Setting, err)
	}
	limit, err := n.setting("maxmemory")
	if err != nil {
		return unknown(n, FamilyEviction, f.Setting, err)
	}
	used := ""
	if share, ok := usedShare(n, limit); ok {
		used = fmt.Sprintf(" (%.0f%% used)", 100*share)
	}
	f.Value = fmt.Sprintf("maxmemory %s%s, maxmemory-policy %s", limit, used, policy)
	switch {
	case policy == "noeviction" && limit == "0":
		f.Status = OK
	case policy == "noeviction":
		f.Status = Note
		f.Why = "when the memory is full, Redis refuses new locks (OOM) and keeps the held ones: Lock fails until memory is freed"
		f.Change = "leave headroom above the peak memory use, or raise maxmemory"
	case limit == "0":
		f.Status = Note
		f.Why = "no memory limit, so nothing is evicted today; setting maxmemory with this policy would evict held locks"
		f.Change = "CONFIG SET maxmemory-policy noeviction, so that a later maxmemory cannot evict locks"
	default:
		f.Status = Hazard
		victims := allTechniques()
		f.Why = "once maxmemory is reached Redis evicts keys, held locks among them, and another client then takes the lock"
		if strings.HasPrefix(policy, "volatile-") {
			victims = withTTL()
			f.Why = "once maxmemory is reached Redis evicts keys with an expiry, which every held lock has except the getset_timestamp family's, and another client then takes the lock"
		}
		f.Breaks = breaking(victims, MutualExclusion)
		f.Change = "CONFIG SET maxmemory-policy noeviction (in redis.conf too), or keep locks on a Redis of their own with noeviction; redlock needs it on a majority of its nodes"
	}
	return f
}

// usedShare is INFO's used_memory as a share of limit (bytes); false when
// there is no limit or INFO does not say.
func usedShare(n *node, limit string) (float64, bool) {
	limitBytes, err1 := strconv.ParseFloat(limit, 64)
	used, err2 := strconv.ParseFloat(n.info["used_memory"], 64)
	if err1 != nil || err2 != nil || limitBytes <= 0 {
		return 0, false
	}
	return used / limitBytes, true
}

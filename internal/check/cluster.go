package check

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// clusterView is what CLUSTER NODES says about the node's cluster.
type clusterView struct {
	myID   string
	ids    []string // every node of the cluster, myself included
	served [][2]int // the slot ranges this node serves, first and last
	err    error    // why the rest is empty
}

// serves reports whether the node serves slot.
func (v *clusterView) serves(slot int) bool {
	for _, r := range v.served {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// count is how many slots the node serves.
func (v *clusterView) count() int {
	n := 0
	for _, r := range v.served {
		n += r[1] - r[0] + 1
	}
	return n
}

// clustered reports whether the node runs in cluster mode; an error says
// INFO could not tell.
func (n *node) clustered() (bool, error) {
	v, err := n.field("cluster_enabled")
	return v == "1", err
}

// readCluster fills n.cluster from CLUSTER NODES, once, when the node runs
// in cluster mode.
func (n *node) readCluster(ctx context.Context) *clusterView {
	if n.cluster != nil {
		return n.cluster
	}
	n.cluster = &clusterView{}
	text, err := redis.String(redis.DoContext(n.conn, ctx, "CLUSTER", "NODES"))
	if err != nil {
		n.cluster.err = fmt.Errorf("CLUSTER NODES refused: %w", err)
		return n.cluster
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 8 {
			continue
		}
		n.cluster.ids = append(n.cluster.ids, fields[0])
		if !strings.Contains(fields[2], "myself") {
			continue
		}
		n.cluster.myID = fields[0]
		for _, s := range fields[8:] {
			if r, ok := parseSlots(s); ok {
				n.cluster.served = append(n.cluster.served, r)
			}
		}
	}
	if n.cluster.myID == "" {
		n.cluster.err = fmt.Errorf("CLUSTER NODES has no line for myself")
	}
	return n.cluster
}

// parseSlots reads "5461-10922" or "42"; a migrating slot ("[42->-id]")
// is not served yet.
func parseSlots(s string) ([2]int, bool) {
	first, last, isRange := strings.Cut(s, "-")
	if !isRange {
		last = first
	}
	a, err1 := strconv.Atoi(first)
	b, err2 := strconv.Atoi(last)
	return [2]int{a, b}, err1 == nil && err2 == nil && a <= b && b < clusterSlots
}

// keySlot asks the server for key's hash slot.
func keySlot(ctx context.Context, n *node, key string) (int, error) {
	slot, err := redis.Int(redis.DoContext(n.conn, ctx, "CLUSTER", "KEYSLOT", key))
	if err != nil {
		return 0, fmt.Errorf("CLUSTER KEYSLOT %q: %w", key, err)
	}
	return slot, nil
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: a "{",
// then a "}" with at least one byte between them.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
}

// checkCluster reports cluster mode and whether one lock's keys (the lock,
// its fence, line and seen keys, as internal/protocol lays them out for
// lua_release and redlock) hash to one slot under the prefix, which their
// scripts need (CROSSSLOT otherwise). A pool to one node does not follow
// MOVED: such a Locker's pool must lead to the master that serves its
// keys; a cluster.Pool routes every key.
func checkCluster(ctx context.Context, n *node, prefix string) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyCluster, Setting: "cluster_enabled, CLUSTER KEYSLOT"}
	on, err := n.clustered()
	if err != nil {
		return unknown(n, FamilyCluster, f.Setting, err)
	}
	if !on {
		f.Status, f.Value = OK, "cluster_enabled 0"
		return f
	}
	keys := protocol.KeysOf(protocol.LockKey(prefix, "lockcompare-check"))
	slots := map[int]bool{}
	var slot int
	for _, k := range []string{keys.Lock, keys.Fence, keys.Line, keys.Seen} {
		if slot, err = keySlot(ctx, n, k); err != nil {
			return unknown(n, FamilyCluster, f.Setting, err)
		}
		slots[slot] = true
	}
	view := n.readCluster(ctx)
	if view.err != nil {
		return unknown(n, FamilyCluster, f.Setting, view.err)
	}
	f.Value = fmt.Sprintf("cluster_enabled 1, this node serves %d of %d slots", view.count(), clusterSlots)
	if len(slots) > 1 {
		f.Status = Hazard
		f.Value += fmt.Sprintf(", one lock's keys under prefix %q span %d slots", prefix, len(slots))
		f.Why = "lua_release's and redlock's scripts touch a lock's four keys at once, which a cluster refuses (CROSSSLOT) when they hash to different slots"
		f.Breaks = breaking(scripted(), Runs)
		f.Change = `use a prefix without an empty "{}" and without a lone "{", e.g. "lock:", or one with a whole hash tag, e.g. "{lock}:"`
		return f
	}
	if hasHashTag(prefix) {
		f.Value += fmt.Sprintf(", every key under prefix %q hashes to slot %d", prefix, slot)
		if view.serves(slot) {
			f.Status = OK
			return f
		}
		f.Status = Hazard
		f.Why = fmt.Sprintf("the prefix's hash tag puts every lock on slot %d, which another master serves: this address answers MOVED to every lock command", slot)
		f.Breaks = breaking(allTechniques(), Runs)
		f.Change = fmt.Sprintf("point the service at the master that serves slot %d (CLUSTER SLOTS)", slot)
		return f
	}
	f.Status = Note
	f.Value += fmt.Sprintf(", one lock's keys share a slot, locks under prefix %q spread over every master", prefix)
	f.Why = "a Locker whose pool leads to this node alone can lock only the keys of the slots it serves"
	f.Change = `give the Locker a cluster.Pool, which sends each lock to the master of its slot, or put a hash tag in the prefix, e.g. -prefix "{lock}:", to keep every lock on one master`
	return f
}

package redistest

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseViews checks the parsing of CLUSTER SHARDS and CLUSTER SLOTS
// replies, as a RESP2 client receives them.
func TestParseViews(t *testing.T) {
	t.Parallel()
	node := func(port int64, role, health string) []any {
		return []any{[]byte("id"), []byte("abc"), []byte("port"), port, []byte("ip"), []byte("127.0.0.1"),
			[]byte("role"), []byte(role), []byte("health"), []byte(health)}
	}
	shard := func(slots []any, nodes ...[]any) []any {
		ns := make([]any, len(nodes))
		for i, n := range nodes {
			ns[i] = n
		}
		return []any{[]byte("slots"), slots, []byte("nodes"), ns}
	}
	shards := []any{
		shard([]any{int64(100), int64(200), int64(0), int64(10)}, node(1, "master", "online"), node(2, "replica", "online")),
		// After a failover: the dead old master shares the shard.
		shard([]any{int64(11), int64(99)}, node(3, "master", "failed"), node(4, "master", "online")),
		shard([]any{}, node(5, "master", "online")),
	}
	v, err := parseShards(shards)
	if err != nil {
		t.Fatalf("parseShards: %v", err)
	}
	want := []viewRange{{0, 10, "127.0.0.1:1"}, {11, 99, "127.0.0.1:4"}, {100, 200, "127.0.0.1:1"}}
	if fmt.Sprint(v.ranges) != fmt.Sprint(want) {
		t.Errorf("parseShards ranges = %v, want %v", v.ranges, want)
	}
	if v.replicaOf["127.0.0.1:2"] != "127.0.0.1:1" || v.role["127.0.0.1:5"] != roleMaster || !v.complete {
		t.Errorf("parseShards = %+v; want 2 a replica of 1, 5 a master, complete", v)
	}
	// A lone node does not know its own address yet.
	lone := []any{[]byte("port"), int64(7), []byte("ip"), []byte(""), []byte("endpoint"), []byte(""),
		[]byte("role"), []byte("master"), []byte("health"), []byte("online")}
	v, err = parseShards([]any{shard([]any{int64(0), int64(clusterSlots - 1)}, lone)})
	if want := "[{0 16383 127.0.0.1:7}]"; err != nil || fmt.Sprint(v.ranges) != want {
		t.Errorf("parseShards of a node without an address: ranges %v, %v; want %s", v.ranges, err, want)
	}
	for _, tc := range []struct {
		name  string
		reply any
	}{
		{"not an array", []byte("x")},
		{"odd slots", []any{shard([]any{int64(1)}, node(1, "master", "online"))}},
		{"no master", []any{shard([]any{int64(1), int64(2)}, node(1, "replica", "online"))}},
		{"overlap", []any{shard([]any{int64(1), int64(5)}, node(1, "master", "online")),
			shard([]any{int64(5), int64(9)}, node(2, "master", "online"))}},
		{"past the last slot", []any{shard([]any{int64(1), int64(clusterSlots)}, node(1, "master", "online"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := parseShards(tc.reply); err == nil {
				t.Errorf("parseShards(%v) = %+v, want an error", tc.reply, v)
			}
		})
	}
	slots := []any{
		[]any{int64(5), int64(9), []any{[]byte("127.0.0.1"), int64(1), []byte("a")}, []any{[]byte("127.0.0.1"), int64(2), []byte("b")}},
		[]any{int64(0), int64(4), []any{[]byte("127.0.0.1"), int64(3), []byte("c")}},
	}
	v, err = parseSlots(slots)
	if err != nil {
		t.Fatalf("parseSlots: %v", err)
	}
	if want := []viewRange{{0, 4, "127.0.0.1:3"}, {5, 9, "127.0.0.1:1"}}; fmt.Sprint(v.ranges) != fmt.Sprint(want) {
		t.Errorf("parseSlots ranges = %v, want %v", v.ranges, want)
	}
	if v.replicaOf["127.0.0.1:2"] != "127.0.0.1:1" || v.complete {
		t.Errorf("parseSlots = %+v; want 2 a replica of 1, not complete", v)
	}
	if got := v.masterOf(7); got != "127.0.0.1:1" {
		t.Errorf("masterOf(7) = %q, want 127.0.0.1:1", got)
	}
	if got := v.masterOf(10); got != "" {
		t.Errorf("masterOf(10) = %q, want \"\" (no range)", got)
	}
}

// checkSlotMap fails the test unless the live slot map is the harness's
// record.
func checkSlotMap(t *testing.T, c *Cluster) {
	t.Helper()
	ranges := c.SlotMap()
	next := 0
	for _, r := range ranges {
		if r.First != next {
			t.Errorf("SlotMap() = %s: slots %d-%d have no master", rangesString(ranges), next, r.First-1)
		}
		for s := r.First; s <= r.Last; s++ {
			if want := c.NodeForSlot(s); r.Master != want {
				t.Errorf("SlotMap() serves slot %d from %s, want %s as NodeForSlot says", s, r.Master.Addr(), want.Addr())
				return
			}
		}
		next = r.Last + 1
	}
	if next != clusterSlots {
		t.Errorf("SlotMap() = %s, want it to end at slot %d", rangesString(ranges), clusterSlots-1)
	}
}

// equalRanges reports whether two slot maps are the same.
func equalRanges(a, b []SlotRange) bool {
	return rangesString(a) == rangesString(b)
}

// rangesString prints a slot map, for messages.
func rangesString(ranges []SlotRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("%d-%d:%s", r.First, r.Last, r.Master.Addr())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

package redistest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// TestClusterReplicas runs one cluster with replicas through everything the
// harness does to it, in turn: the start, moving slots while a client
// writes, a move stopped half-way, a graceful failover, a killed master and
// its rejoining. One cluster keeps the test short.
func TestClusterReplicas(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := StartCluster(t, WithClusterReplicas())
	t.Logf("started in %v", time.Since(start))

	checkReplicaCluster(t, c)
	step := time.Now()
	checkMoveUnderTraffic(t, c)
	t.Logf("moved slots under traffic in %v", time.Since(step))
	step = time.Now()
	checkHalfMove(t, c)
	t.Logf("moved a slot half-way and on in %v", time.Since(step))
	step = time.Now()
	checkFailover(t, c)
	t.Logf("failed over gracefully in %v", time.Since(step))
	step = time.Now()
	killed := checkKillMaster(t, c)
	t.Logf("killed a master and saw its replica promoted in %v", time.Since(step))
	step = time.Now()
	c.Rejoin(killed)
	checkRole(t, killed, "slave")
	checkSlotMap(t, c)
	t.Logf("rejoined in %v; %v in all", time.Since(step), time.Since(start))
}

// checkReplicaCluster checks a fresh cluster with replicas: three shards,
// each replica replicating its master, the thirds of the slots in the live
// map, CLUSTER SHARDS and CLUSTER SLOTS agreeing, writes reaching the
// replicas.
func checkReplicaCluster(t *testing.T, c *Cluster) {
	t.Helper()
	masters, replicas := c.Masters(), c.Replicas()
	if len(masters) != clusterMasters || len(replicas) != clusterMasters {
		t.Fatalf("%d masters and %d replicas, want %d of each", len(masters), len(replicas), clusterMasters)
	}
	for i, r := range replicas {
		if got := c.ReplicaOf(masters[i]); got != r {
			t.Errorf("ReplicaOf(%s) = %s, want %s", masters[i].Addr(), nodeAddr(got), r.Addr())
		}
		fields := checkRole(t, r, "slave")
		_, port := masters[i].srv.peer()
		if fields["master_port"] != port {
			t.Errorf("replica %s replicates port %s, want %s (its master %s)", r.Addr(), fields["master_port"], port, masters[i].Addr())
		}
		checkRole(t, masters[i], "master")
	}
	if got := c.NodeTimeout(); got != clusterNodeTimeout {
		t.Errorf("NodeTimeout() = %v, want %v", got, clusterNodeTimeout)
	}
	got := c.SlotMap()
	want := make([]SlotRange, clusterMasters)
	for i, m := range masters {
		want[i] = SlotRange{First: i * clusterSlots / clusterMasters, Last: (i+1)*clusterSlots/clusterMasters - 1, Master: m}
	}
	if !equalRanges(got, want) {
		t.Errorf("SlotMap() = %s, want %s", rangesString(got), rangesString(want))
	}
	for _, n := range c.nodes() {
		shards, err := readView(n.Addr(), true)
		if err != nil {
			t.Fatalf("readView(%s, shards): %v", n.Addr(), err)
		}
		slots, err := readView(n.Addr(), false)
		if err != nil {
			t.Fatalf("readView(%s, slots): %v", n.Addr(), err)
		}
		if !shards.complete || slots.complete {
			t.Errorf("views of %s: complete %v (SHARDS) and %v (SLOTS), want true and false", n.Addr(), shards.complete, slots.complete)
		}
		for name, v := range map[string]view{"CLUSTER SHARDS": shards, "CLUSTER SLOTS": slots} {
			if err := c.checkView(v); err != nil {
				t.Errorf("%s on %s: %v", name, n.Addr(), err)
			}
		}
	}
	// A write acknowledged by the replica (WAIT) can be read there.
	key := "replicated"
	m := c.NodeFor(key)
	mustDo(t, m, "SET", key, "v")
	waitReplicas(t, m)
	if v := readOnReplica(t, c.ReplicaOf(m), key); v != "v" {
		t.Errorf("GET %s on the replica of %s = %q, want %q", key, m.Addr(), v, "v")
	}
}

// checkMoveUnderTraffic moves the slots of keys of the first master to the
// second while a client that follows MOVED and ASK increments them, and
// checks that no increment is lost and the keys are served by the second.
func checkMoveUnderTraffic(t *testing.T, c *Cluster) {
	t.Helper()
	source, target := c.Masters()[0], c.Masters()[1]
	keys := keysServedBy(t, c, source, "traffic:", 4)
	// Keys that share a slot, so that moving one slot moves many.
	for i := range 200 {
		key := fmt.Sprintf("{%s}:%d", keys[0], i)
		mustDo(t, source, "SET", key, "x")
	}
	traffic := startTraffic(t, source.Addr(), keys)
	traffic.waitOps(t, 50)
	c.MoveKeys(target, keys...)
	traffic.waitOps(t, 50)
	counts := traffic.stop(t)

	for _, key := range keys {
		if got := c.NodeFor(key); got != target {
			t.Errorf("NodeFor(%q) after MoveKeys = %s, want %s", key, got.Addr(), target.Addr())
		}
		v, err := redis.Int(target.Do("GET", key))
		if err != nil || v != counts[key] {
			t.Errorf("GET %s on %s = %d, %v; want %d, the increments the client saw succeed", key, target.Addr(), v, err, counts[key])
		}
		slot := c.Slot(key)
		_, err = source.Do("GET", key)
		if want := fmt.Sprintf("MOVED %d %s", slot, target.Addr()); err == nil || err.Error() != want {
			t.Errorf("GET %s on the old master %s: err = %v, want %q", key, source.Addr(), err, want)
		}
		if n, err := redis.Int(source.Do("CLUSTER", "COUNTKEYSINSLOT", slot)); err != nil || n != 0 {
			t.Errorf("CLUSTER COUNTKEYSINSLOT %d on the old master = %d, %v; want 0", slot, n, err)
		}
	}
	if n, err := redis.Int(target.Do("CLUSTER", "COUNTKEYSINSLOT", c.Slot(keys[0]))); err != nil || n != 201 {
		t.Errorf("CLUSTER COUNTKEYSINSLOT of %q's slot on the new master = %d, %v; want 201", keys[0], n, err)
	}
	checkSlotMap(t, c)
	// Moving slots the target serves already does nothing.
	c.MoveKeys(target, keys...)
}

// checkHalfMove stops a move half-way and checks the redirects clients get
// meanwhile: ASK from the source for a moved key, MOVED from the target
// without ASKING, the key served by the target after ASKING.
func checkHalfMove(t *testing.T, c *Cluster) {
	t.Helper()
	source, target := c.Masters()[2], c.Masters()[0]
	tag := keysServedBy(t, c, source, "half:", 1)[0]
	keys := []string{"{" + tag + "}:1", "{" + tag + "}:2", "{" + tag + "}:3", "{" + tag + "}:4"}
	for _, k := range keys {
		mustDo(t, source, "SET", k, k)
	}
	slot := c.Slot(keys[0])
	m := c.StartMove(slot, target)
	if m.Slot() != slot || m.Source() != source || m.Target() != target {
		t.Fatalf("StartMove(%d, %s) = %v, want slot %d from %s", slot, target.Addr(), m, slot, source.Addr())
	}
	m.MigrateKeys(keys[0], keys[1])
	ask := fmt.Sprintf("ASK %d %s", slot, target.Addr())
	tests := []struct {
		name   string
		node   *Node
		asking bool
		key    string
		want   string // the value, or the error
	}{
		{"source serves a key it holds", source, false, keys[2], keys[2]},
		{"source sends a moved key on", source, false, keys[0], ask},
		{"source sends a new key on", source, false, "{" + tag + "}:new", ask},
		{"target sends a client without ASKING back", target, false, keys[0], fmt.Sprintf("MOVED %d %s", slot, source.Addr())},
		{"target serves a moved key after ASKING", target, true, keys[1], keys[1]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := redis.String(sendAsking(tc.node.Addr(), tc.asking, "GET", tc.key))
			got := reply
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("GET %s on %s (ASKING %v) = %q, want %q", tc.key, tc.node.Addr(), tc.asking, got, tc.want)
			}
		})
	}
	if got := m.MigrateSome(1); len(got) != 1 {
		t.Errorf("MigrateSome(1) moved %v, want one key", got)
	}
	if got := c.NodeForSlot(slot); got != source {
		t.Errorf("NodeForSlot(%d) during the move = %s, want the source %s", slot, got.Addr(), source.Addr())
	}
	m.Finish()
	m.Finish() // does nothing
	if got := c.NodeForSlot(slot); got != target {
		t.Errorf("NodeForSlot(%d) after Finish = %s, want the target %s", slot, got.Addr(), target.Addr())
	}
	for _, k := range keys {
		if v, _ := getString(t, target, k); v != k {
			t.Errorf("GET %s on the target after Finish = %q, want %q", k, v, k)
		}
	}
	checkSlotMap(t, c)
}

// checkFailover fails the second shard over gracefully and checks that
// the roles swapped and no data was lost.
func checkFailover(t *testing.T, c *Cluster) {
	t.Helper()
	old := c.Masters()[1]
	replica := c.ReplicaOf(old)
	key := keysServedBy(t, c, old, "failover:", 1)[0]
	mustDo(t, old, "SET", key, "before")
	got := c.Failover(old)
	if got != replica {
		t.Fatalf("Failover(%s) = %s, want its replica %s", old.Addr(), nodeAddr(got), replica.Addr())
	}
	if c.Masters()[1] != replica || c.Replicas()[1] != old || c.ReplicaOf(replica) != old {
		t.Errorf("after Failover: %v; want %s master of shard 1 and %s its replica", c, replica.Addr(), old.Addr())
	}
	checkRole(t, replica, "master")
	checkRole(t, old, "slave")
	if c.NodeFor(key) != replica {
		t.Errorf("NodeFor(%q) = %s, want the new master %s", key, c.NodeFor(key).Addr(), replica.Addr())
	}
	if v, _ := getString(t, replica, key); v != "before" {
		t.Errorf("GET %s on the new master = %q, want %q (a graceful failover loses nothing)", key, v, "before")
	}
	mustDo(t, replica, "SET", key, "after")
	checkSlotMap(t, c)
}

// checkKillMaster kills the third shard's master and checks that its
// replica took over with the data it had received. It returns the killed
// node.
func checkKillMaster(t *testing.T, c *Cluster) *Node {
	t.Helper()
	old := c.Masters()[2]
	replica := c.ReplicaOf(old)
	key := keysServedBy(t, c, old, "kill:", 1)[0]
	mustDo(t, old, "SET", key, "before")
	waitReplicas(t, old)
	got := c.KillMaster(old)
	if got != replica {
		t.Fatalf("KillMaster(%s) = %s, want its replica %s", old.Addr(), nodeAddr(got), replica.Addr())
	}
	if c.Masters()[2] != replica || c.Replicas()[2] != old {
		t.Errorf("after KillMaster: %v; want %s master of shard 2 and %s in its replica's place", c, replica.Addr(), old.Addr())
	}
	checkRole(t, replica, "master")
	if v, _ := getString(t, replica, key); v != "before" {
		t.Errorf("GET %s on the promoted replica = %q, want %q (the write was acknowledged by WAIT)", key, v, "before")
	}
	mustDo(t, replica, "SET", key, "after")
	for _, n := range c.liveNodes() {
		info, err := redis.String(n.Do("CLUSTER", "INFO"))
		if err != nil || redisinfo.Fields(info)["cluster_state"] != "ok" {
			t.Errorf("CLUSTER INFO on %s after KillMaster = %q, %v; want cluster_state:ok", n.Addr(), info, err)
		}
	}
	checkSlotMap(t, c)
	return old
}

// checkMisuse checks, on a cluster without replicas, that the methods
// refuse what they cannot do, saying why, and that a move works there too.
func checkMisuse(t *testing.T, plain *Cluster) {
	t.Helper()
	if r := plain.Replicas(); r != nil {
		t.Errorf("Replicas() of a cluster without replicas = %v, want nil", addrs(r))
	}
	if got, want := plain.NodeTimeout(), 15*time.Second; got != want {
		t.Errorf("NodeTimeout() without replicas = %v, want the server's default %v", got, want)
	}
	m := plain.Masters()
	slot0 := plain.NodeForSlot(0)
	tests := []struct {
		name string
		call func(c *Cluster)
		want string
	}{
		{"Failover without replicas", func(c *Cluster) { c.Failover(m[0]) }, "no replicas"},
		{"KillMaster without replicas", func(c *Cluster) { c.KillMaster(m[0]) }, "no replicas"},
		{"ReplicaOf without replicas", func(c *Cluster) { c.ReplicaOf(m[0]) }, "no replicas"},
		{"StartMove to the slot's master", func(c *Cluster) { c.StartMove(0, slot0) }, "served by " + slot0.Addr() + " already"},
		{"StartMove to a stranger", func(c *Cluster) { c.StartMove(0, &Node{addr: "127.0.0.1:1"}) }, "not one of the masters"},
		{"slot out of range", func(c *Cluster) { c.MoveSlots(m[1], clusterSlots) }, "want a slot in [0, 16384)"},
		{"Rejoin a master", func(c *Cluster) { c.Rejoin(m[0]) }, "not one of the replicas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fatalOf(t, plain, func() { tc.call(plain) }); !strings.Contains(got, tc.want) {
				t.Errorf("Fatalf %q, want it to hold %q", got, tc.want)
			}
		})
	}
	// A key of another slot stops MigrateKeys before anything moves; the
	// move is then finished.
	key := keysServedBy(t, plain, m[0], "misuse:", 1)[0]
	others := keysServedBy(t, plain, m[0], "misuse-other:", 2)
	other := others[0]
	if plain.Slot(other) == plain.Slot(key) {
		other = others[1]
	}
	mustDo(t, m[0], "SET", key, "v")
	move := plain.StartMove(plain.Slot(key), m[1])
	got := fatalOf(t, plain, func() { move.MigrateKeys(key, other) })
	if want := "not of slot"; !strings.Contains(got, want) {
		t.Errorf("MigrateKeys with a key of another slot: Fatalf %q, want it to hold %q", got, want)
	}
	if v, _ := getString(t, m[0], key); v != "v" {
		t.Errorf("GET %s on the source after the refused MigrateKeys = %q, want %q", key, v, "v")
	}
	move.Finish()
	if v, _ := getString(t, m[1], key); v != "v" {
		t.Errorf("GET %s on the target after Finish = %q, want %q", key, v, "v")
	}
	checkSlotMap(t, plain)
}

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

// fatalOf calls call in a goroutine of its own with c reporting to a
// fatalRecorder, and returns the message of the Fatalf that ended it.
func fatalOf(t *testing.T, c *Cluster, call func()) string {
	t.Helper()
	f := &fatalRecorder{TB: t}
	saved := c.t
	c.t = f
	defer func() { c.t = saved }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	<-done
	return f.fatal
}

// checkRole fails the test unless node's INFO replication says role, and
// returns its fields.
func checkRole(t *testing.T, node *Node, role string) map[string]string {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "replication"))
	if err != nil {
		t.Fatalf("INFO replication on %s: %v", node.Addr(), err)
	}
	fields := redisinfo.Fields(info)
	if fields["role"] != role {
		t.Errorf("%s has role %q, want %q", node.Addr(), fields["role"], role)
	}
	return fields
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

// waitReplicas waits until master's replica acknowledged every write
// (WAIT 1).
func waitReplicas(t *testing.T, master *Node) {
	t.Helper()
	if n, err := redis.Int(master.Do("WAIT", 1, 1000)); err != nil || n != 1 {
		t.Fatalf("WAIT 1 1000 on %s = %d, %v; want 1 replica", master.Addr(), n, err)
	}
}

// readOnReplica reads key on a cluster replica (READONLY, then GET).
func readOnReplica(t *testing.T, replica *Node, key string) string {
	t.Helper()
	conn, err := redis.Dial("tcp", replica.Addr(), redis.DialConnectTimeout(doTimeout), redis.DialReadTimeout(doTimeout))
	if err != nil {
		t.Fatalf("dial %s: %v", replica.Addr(), err)
	}
	defer conn.Close()
	if _, err := conn.Do("READONLY"); err != nil {
		t.Fatalf("READONLY on %s: %v", replica.Addr(), err)
	}
	v, err := redis.String(conn.Do("GET", key))
	if err != nil {
		t.Fatalf("GET %s on replica %s: %v", key, replica.Addr(), err)
	}
	return v
}

// keysServedBy returns n keys starting with prefix whose slots master
// serves, each of a slot of its own.
func keysServedBy(t *testing.T, c *Cluster, master *Node, prefix string, n int) []string {
	t.Helper()
	var keys []string
	slots := map[int]bool{}
	for i := 0; len(keys) < n; i++ {
		if i > 1000 {
			t.Fatalf("fewer than %d keys %s0..%s1000 are served by %s", n, prefix, prefix, master.Addr())
		}
		key := prefix + strconv.Itoa(i)
		if s := c.Slot(key); c.NodeForSlot(s) == master && !slots[s] {
			slots[s] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// sendAsking sends one command to addr on a new connection, preceded by
// ASKING when asking is set.
func sendAsking(addr string, asking bool, cmd string, args ...any) (any, error) {
	conn, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(doTimeout),
		redis.DialReadTimeout(doTimeout), redis.DialWriteTimeout(doTimeout))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if asking {
		if _, err := conn.Do("ASKING"); err != nil {
			return nil, err
		}
	}
	return conn.Do(cmd, args...)
}

// traffic is a client incrementing keys in a loop, following MOVED and ASK
// as a cluster client does. Its goroutine ends at stop.
type traffic struct {
	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	// counts are the increments that succeeded, per key.
	counts map[string]int
	ops    int
	errs   []error
}

// startTraffic starts incrementing keys, sending each first to addr.
func startTraffic(t *testing.T, addr string, keys []string) *traffic {
	t.Helper()
	tr := &traffic{quit: make(chan struct{}), done: make(chan struct{}), counts: map[string]int{}}
	route := map[string]string{}
	for _, k := range keys {
		route[k] = addr
	}
	go func() {
		defer close(tr.done)
		for i := 0; ; i++ {
			select {
			case <-tr.quit:
				return
			default:
			}
			key := keys[i%len(keys)]
			_, err := followRedirects(route, key, "INCR", key)
			tr.mu.Lock()
			if err != nil {
				tr.errs = append(tr.errs, fmt.Errorf("INCR %s: %w", key, err))
			} else {
				tr.counts[key]++
				tr.ops++
			}
			tr.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-tr.quit:
		default:
			close(tr.quit)
		}
		<-tr.done
	})
	return tr
}

// waitOps waits until n more increments succeeded.
func (tr *traffic) waitOps(t *testing.T, n int) {
	t.Helper()
	tr.mu.Lock()
	target := tr.ops + n
	tr.mu.Unlock()
	eventually(t, 10*time.Second, fmt.Sprintf("%d increments", n), func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.ops >= target
	})
}

// stop ends the client and returns the increments that succeeded per key;
// it fails the test if any failed.
func (tr *traffic) stop(t *testing.T) map[string]int {
	t.Helper()
	close(tr.quit)
	<-tr.done
	if err := errors.Join(tr.errs...); err != nil {
		t.Errorf("the client's commands failed: %v", err)
	}
	return tr.counts
}

// followRedirects sends a command on key to the address route holds for
// it, following MOVED (which updates route) and ASK (ASKING, then the
// command, once), as a cluster client does.
func followRedirects(route map[string]string, key, cmd string, args ...any) (any, error) {
	addr, asking := route[key], false
	for range 5 {
		reply, err := sendAsking(addr, asking, cmd, args...)
		var rerr redis.Error
		if !errors.As(err, &rerr) {
			return reply, err
		}
		f := strings.Fields(string(rerr))
		switch {
		case len(f) == 3 && f[0] == "MOVED":
			addr, asking = f[2], false
			route[key] = addr
		case len(f) == 3 && f[0] == "ASK":
			addr, asking = f[2], true
		default:
			return reply, err
		}
	}
	return nil, fmt.Errorf("more than 5 redirects for %s", key)
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

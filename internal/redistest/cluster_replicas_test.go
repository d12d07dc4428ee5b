package redistest

import (
	"strings"
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
	// Neither failover runs while the shard's replica is down.
	for name, call := range map[string]func(){
		"Failover":   func() { c.Failover(c.Masters()[2]) },
		"KillMaster": func() { c.KillMaster(c.Masters()[2]) },
	} {
		if got, want := fatalOf(t, c, call), "must both run"; !strings.Contains(got, want) {
			t.Errorf("%s with the replica down: Fatalf %q, want it to hold %q", name, got, want)
		}
	}
	step = time.Now()
	c.Rejoin(killed)
	c.Rejoin(killed) // does nothing: it runs
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

// waitReplicas waits until master's replica acknowledged every write
// (WAIT 1).
func waitReplicas(t *testing.T, master *Node) {
	t.Helper()
	// WAIT returns as soon as the replica acknowledges; 5 s spares a
	// loaded machine a false alarm.
	if n, err := redis.Int(doTimed(7*time.Second, master.Addr(), "WAIT", 1, 5000)); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 on %s = %d, %v; want 1 replica", master.Addr(), n, err)
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

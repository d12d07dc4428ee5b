package redistest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestCluster(t *testing.T) {
	t.Parallel()
	c := StartCluster(t)
	masters := c.Masters()
	if len(masters) != clusterMasters {
		t.Fatalf("Masters() has %d nodes, want %d", len(masters), clusterMasters)
	}
	for _, n := range masters {
		info, err := redis.String(n.Do("CLUSTER", "INFO"))
		if err != nil || !strings.Contains(info, "cluster_state:ok") ||
			!strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Fatalf("CLUSTER INFO on %s = %q, %v; want cluster_state:ok with 16384 slots", n.Addr(), info, err)
		}
		if n.Backend() != backendProcess {
			t.Errorf("cluster node %s on backend %q, want %q", n.Addr(), n.Backend(), backendProcess)
		}
	}

	tests := []struct {
		key  string
		slot int // from the Redis Cluster specification
	}{
		{"foo", 12182},
		{"bar", 5061},
		{"lock:order-1", -1},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"lockzoo:{lock:k}:line", -1},
	}
	owners := map[*Node]bool{}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			slot := c.Slot(tc.key)
			if tc.slot >= 0 && slot != tc.slot {
				t.Errorf("Slot(%q) = %d, want %d", tc.key, slot, tc.slot)
			}
			owner := c.NodeFor(tc.key)
			owners[owner] = true
			if want := masters[slot*clusterMasters/clusterSlots]; owner != want {
				t.Errorf("NodeFor(%q) = %s, want %s (slot %d lies in its range)", tc.key, owner.Addr(), want.Addr(), slot)
			}
			if c.PoolFor(tc.key) != owner.Pool() {
				t.Errorf("PoolFor(%q) is not the pool of NodeFor's node", tc.key)
			}
			conn := c.PoolFor(tc.key).Get()
			defer conn.Close()
			if ok, err := redis.String(conn.Do("SET", tc.key, "v")); err != nil || ok != "OK" {
				t.Fatalf("SET %q through PoolFor = %q, %v; want OK", tc.key, ok, err)
			}
			for _, other := range masters {
				if other == owner {
					continue
				}
				_, err := other.Do("SET", tc.key, "v")
				want := fmt.Sprintf("MOVED %d %s", slot, owner.Addr())
				if err == nil || err.Error() != want {
					t.Errorf("SET %q on %s, not its master: err = %v, want %q", tc.key, other.Addr(), err, want)
				}
			}
		})
	}
	// A key and a key sharing its {tag} live on one master.
	if c.NodeFor("{user1000}.following") != c.NodeFor("{user1000}.followers") {
		t.Error("keys with the same {tag} map to different masters")
	}
	if len(owners) < 2 {
		t.Errorf("the keys all map to one master, want them spread over at least 2")
	}
	checkMisuse(t, c)
	// Slot asks another master when the first is down.
	masters[0].Kill()
	if slot := c.Slot("foo"); slot != 12182 {
		t.Errorf("Slot(foo) with the first master killed = %d, want 12182", slot)
	}
}

func TestClusterOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info string
		want bool
	}{
		{"ok", "cluster_state:ok\r\ncluster_known_nodes:3\r\n", true},
		{"fail", "cluster_state:fail\r\ncluster_known_nodes:3\r\n", false},
		{"alone", "cluster_state:ok\r\ncluster_known_nodes:1\r\n", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clusterOK(tc.info, 3); got != tc.want {
				t.Errorf("clusterOK(%q, 3) = %v, want %v", tc.info, got, tc.want)
			}
		})
	}
}

func TestStartClusterFailsWithAReason(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"without redis-server", map[string]string{envBackend: backendDocker, envServer: defaultServer, "PATH": t.TempDir()}, "apt-get install redis-server"},
		{"unknown backend", map[string]string{envBackend: "bogus"}, `"bogus"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			f := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				StartCluster(f)
			}()
			<-done
			if !strings.Contains(f.fatal, tc.want) {
				t.Errorf("StartCluster: Fatalf %q, want it to hold %q", f.fatal, tc.want)
			}
		})
	}
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

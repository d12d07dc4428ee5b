package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestReplicaFailover(t *testing.T) {
	t.Parallel()
	master := Start(t, 1)[0]
	mustDo(t, master, "SET", "before", "1")

	replica := master.StartReplica()
	if replica.Backend() != master.Backend() || replica.Addr() == master.Addr() {
		t.Fatalf("replica %s on %s, master %s on %s", replica.Addr(), replica.Backend(),
			master.Addr(), master.Backend())
	}
	if v, _ := getString(t, replica, "before"); v != "1" {
		t.Fatalf("replica lacks the key written before StartReplica: GET before = %q", v)
	}
	mustDo(t, master, "SET", "after", "2")
	waitKey(t, replica, "after", "2")
	if _, err := replica.Do("SET", "x", "1"); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on the replica: err = %v, want READONLY", err)
	}

	// The replica follows its master across Kill and Restart, even when
	// another server starts meanwhile (a container may get the master's
	// old bridge address).
	master.Kill()
	intruder := Start(t, 1)[0]
	mustDo(t, intruder, "SET", "intruder", "1")
	master.Restart()
	mustDo(t, master, "SET", "again", "3")
	waitKey(t, replica, "again", "3")
	if _, ok := getString(t, replica, "intruder"); ok {
		t.Fatal("the replica synced from another server than its master")
	}

	master.Kill()
	replica.Promote()
	mustDo(t, replica, "SET", "x", "1")
	if v, _ := getString(t, replica, "x"); v != "1" {
		t.Errorf("GET x on the promoted replica = %q, want \"1\"", v)
	}
	if v, _ := getString(t, replica, "again"); v != "3" {
		t.Errorf("promoted replica lost its data: GET again = %q", v)
	}
	info, err := redis.String(replica.Do("INFO", "replication"))
	if err != nil || !strings.Contains(info, "role:master") {
		t.Errorf("INFO replication after Promote = %q, %v; want role:master", info, err)
	}
}

// waitKey waits until key holds value on node; a replica reconnects to its
// master about once a second.
func waitKey(t *testing.T, node *Node, key, value string) {
	t.Helper()
	eventually(t, 5*time.Second, key+" reaches "+node.Addr(), func() bool {
		v, _ := getString(t, node, key)
		return v == value
	})
}

func TestSynced(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info string
		want bool
	}{
		{"synced", "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\nmaster_sync_in_progress:0\r\n", true},
		{"link down", "role:slave\r\nmaster_link_status:down\r\nmaster_sync_in_progress:0\r\n", false},
		{"syncing", "role:slave\r\nmaster_link_status:up\r\nmaster_sync_in_progress:1\r\n", false},
		{"master", "role:master\r\nconnected_slaves:0\r\n", false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := synced(tc.info); got != tc.want {
				t.Errorf("synced(%q) = %v, want %v", tc.info, got, tc.want)
			}
		})
	}
}

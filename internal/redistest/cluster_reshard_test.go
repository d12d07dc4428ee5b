package redistest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

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
	// Another goroutine reads the harness's record while the move
	// changes it (the race detector watches).
	slot, quit, done := c.Slot(keys[0]), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(time.Millisecond):
			}
			if n := c.NodeForSlot(slot); n != source && n != target {
				t.Errorf("NodeForSlot(%d) during the move = %s, want %s or %s", slot, n.Addr(), source.Addr(), target.Addr())
			}
		}
	}()
	c.MoveKeys(target, keys...)
	close(quit)
	<-done
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

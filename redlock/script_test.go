package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestAcquireScriptReplies runs the acquire script on one node as a round
// sends it (the lock's four keys and six arguments, a seventh only to
// release first) and checks its replies: the counter alone on the
// uncontended path, {1, counter, 1} when it released the lock to release
// first, and {0, pttl, 0} when someone else holds the lock; to a caller
// that waits in line, {0, pttl, 0, listened}, listened 1 only while its
// Locker listens on its inbox on the node.
func TestAcquireScriptReplies(t *testing.T) {
	nodes, l, _ := startLocker(t, 1, Config{Config: strategy.Config{TTL: 10 * time.Second}})
	tq := l.t
	rkey := protocol.LockKey("lock:", "k")
	k := protocol.KeysOf(rkey)
	waits := "0"
	run := func(t *testing.T, token string, prev ...any) any {
		t.Helper()
		kv := append(tq.acquireScript.Args(11), k.Lock, k.Fence, k.Line, k.Seen,
			token, int64(10000), token, waits, time.Now().UnixMicro(), "locker")
		kv = append(kv, prev...)
		reply, err := tq.evalArgs(context.Background(), &link{n: tq.nodes[0]}, tq.acquireScript, kv)
		if err != nil {
			t.Fatalf("acquire script = %v, want a reply", err)
		}
		return reply
	}
	var first int64
	t.Run("uncontended", func(t *testing.T) {
		reply := run(t, "a")
		f, ok := reply.(int64)
		if !ok || f <= 0 {
			t.Fatalf("acquire script replied %#v, want the fencing counter alone", reply)
		}
		first = f
	})
	t.Run("release first", func(t *testing.T) {
		reply := run(t, "b", "a")
		v, ok := readAcquire(reply)
		if !ok || v != (acquireReply{1, first + 1, 1, 0, noRefusal}) || len(reply.([]any)) != 3 {
			t.Fatalf("acquire script replied %#v, want [1 %d 1]", reply, first+1)
		}
	})
	t.Run("release first, not held", func(t *testing.T) {
		if _, err := nodes[0].Do("DEL", rkey); err != nil {
			t.Fatalf("DEL = %v", err)
		}
		reply := run(t, "c", "a")
		if f, ok := reply.(int64); !ok || f != first+2 {
			t.Fatalf("acquire script replied %#v, want the fencing counter %d alone", reply, first+2)
		}
	})
	t.Run("held", func(t *testing.T) {
		reply := run(t, "d")
		v, ok := readAcquire(reply)
		if !ok || v.status != 0 || v.n <= 0 || v.released != 0 || len(reply.([]any)) != 3 {
			t.Fatalf("acquire script replied %#v, want [0 <pttl> 0]", reply)
		}
	})
	waits = "1"
	t.Run("held, waiting", func(t *testing.T) {
		reply := run(t, "e")
		v, ok := readAcquire(reply)
		if !ok || v != (acquireReply{0, v.n, 0, 0, first + 2}) || v.n <= 0 || len(reply.([]any)) != 5 {
			t.Fatalf("acquire script replied %#v, want [0 <pttl> 0 0 %d] (not listening; the counter)", reply, first+2)
		}
	})
	t.Run("held, waiting and listening", func(t *testing.T) {
		locktest.Listen(t, nodes[0], protocol.Inbox(rkey, "locker"))
		reply := run(t, "e")
		v, ok := readAcquire(reply)
		if !ok || v != (acquireReply{0, v.n, 0, 1, first + 2}) || v.n <= 0 {
			t.Fatalf("acquire script replied %#v, want [0 <pttl> 0 1 %d] (listening; the counter)", reply, first+2)
		}
	})
}

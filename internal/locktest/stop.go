package locktest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// Stopped is a client operation held at a fault point by StopAt.
type Stopped struct {
	gate     *fault.Gate
	passes   atomic.Int32 // times the client reached the point
	finished chan struct{}
	err      error // op's result, set before finished is closed
}

// StopAt runs op in a goroutine with a context whose hook counts the passes
// through point and holds the client there until Resume, and returns once
// the client is held. The goroutine ends when op returns: after Resume, or,
// if the test ends first, when the cleanup opens the gate. It fails the
// test if op returns or takes 10 s without reaching point.
func StopAt(t *testing.T, point string, op func(ctx context.Context) error) *Stopped {
	t.Helper()
	s := &Stopped{gate: fault.NewGate(point), finished: make(chan struct{})}
	count := func(_ context.Context, p string) error {
		if p == point {
			s.passes.Add(1)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ctx = fault.With(ctx, fault.Chain(count, s.gate.Hook))
	go func() {
		defer close(s.finished)
		s.err = op(ctx)
	}()
	t.Cleanup(func() {
		s.gate.Open()
		<-s.finished
		cancel()
	})
	select {
	case <-s.gate.Reached():
	case <-s.finished:
		t.Fatalf("client returned %v before reaching %s", s.err, point)
	case <-time.After(10 * time.Second):
		t.Fatalf("client did not reach %s within 10s", point)
	}
	return s
}

// Passes returns how many times the client reached the point so far.
func (s *Stopped) Passes() int32 { return s.passes.Load() }

// Resume lets the client go and returns op's error.
func (s *Stopped) Resume() error {
	s.gate.Open()
	<-s.finished
	return s.err
}

// MustDo runs one command on node or fails the test.
func MustDo(t testing.TB, node *redistest.Node, cmd string, args ...any) {
	t.Helper()
	if _, err := node.Do(cmd, args...); err != nil {
		t.Fatalf("%s %v = %v, want nil", cmd, args, err)
	}
}

// Get returns the value of key on node, "" when it is missing; any other
// failure fails the test.
func Get(t testing.TB, node *redistest.Node, key string) string {
	t.Helper()
	v, err := redis.String(node.Do("GET", key))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		t.Fatalf("GET %s = %v, want nil", key, err)
	}
	return v
}

// PTTL returns the remaining lifetime of key on node, or fails the test when
// the key has none.
func PTTL(t testing.TB, node *redistest.Node, key string) time.Duration {
	t.Helper()
	ms, err := redis.Int64(node.Do("PTTL", key))
	if err != nil || ms < 0 {
		t.Fatalf("PTTL %s = %d, %v; want a positive expiry", key, ms, err)
	}
	return time.Duration(ms) * time.Millisecond
}

// Listen subscribes to channel on a connection of its own, closed when
// the test ends, as a Locker that listens on its inbox does: PUBSUB NUMSUB
// counts it.
func Listen(t testing.TB, node *redistest.Node, channel string) {
	t.Helper()
	c, err := redis.Dial("tcp", node.Addr())
	if err != nil {
		t.Fatalf("Dial(%s) = %v, want nil", node.Addr(), err)
	}
	psc := redis.PubSubConn{Conn: c}
	t.Cleanup(func() { _ = psc.Close() })
	if err := psc.Subscribe(channel); err != nil {
		t.Fatalf("SUBSCRIBE %s = %v, want nil", channel, err)
	}
	if m, ok := psc.ReceiveWithTimeout(5 * time.Second).(redis.Subscription); !ok || m.Count != 1 {
		t.Fatalf("SUBSCRIBE %s reply = %v, want a subscription", channel, m)
	}
}

// LockValue returns the value of the lock name under prefix on node,
// whichever of protocol.LockKeys the technique keeps it under ("" when
// none exists).
func LockValue(t testing.TB, node *redistest.Node, prefix, name string) string {
	t.Helper()
	for _, key := range protocol.LockKeys(prefix, name) {
		if v := Get(t, node, key); v != "" {
			return v
		}
	}
	return ""
}

// AssertReleased fails the test for every key on node that matches
// pattern, except fencing counters (protocol.KeysOf's Fence) that expire
// within their retention: every lock taken must have been released, and
// nothing may stay that never expires. maxTTL is the longest lock TTL the
// test used.
func AssertReleased(t testing.TB, node *redistest.Node, pattern string, maxTTL time.Duration) {
	t.Helper()
	keys, err := redis.Strings(node.Do("KEYS", pattern))
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	fence := protocol.KeysOf("").Fence
	for _, k := range keys {
		pttl, err := redis.Int64(node.Do("PTTL", k))
		if !strings.HasSuffix(k, fence) || err != nil || pttl <= 0 || pttl > (maxTTL+protocol.FenceRetention).Milliseconds() {
			t.Errorf("left on the server: %q with PTTL %d ms, %v; want no lock, and only fencing counters that expire within TTL + retention", k, pttl, err)
		}
	}
}

// AssertUnlocked is AssertReleased for a run with faults, where a waiter
// whose clean-up met a failed connection may be left in a line: no lock
// may be left on node among the keys that match pattern, and every other
// key must expire, lines within the time a waiter keeps its place unseen
// (four times protocol.Listened), fencing counters within maxTTL and
// their retention.
func AssertUnlocked(t testing.TB, node *redistest.Node, pattern string, maxTTL time.Duration) {
	t.Helper()
	keys, err := redis.Strings(node.Do("KEYS", pattern))
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	k := protocol.KeysOf("")
	for _, key := range keys {
		pttl, err := redis.Int64(node.Do("PTTL", key))
		within := time.Duration(0)
		switch {
		case strings.HasSuffix(key, k.Fence):
			within = maxTTL + protocol.FenceRetention
		case strings.HasSuffix(key, k.Line), strings.HasSuffix(key, k.Seen):
			within = 4 * protocol.Listened
		}
		if err != nil || pttl <= 0 || pttl > within.Milliseconds() {
			v, _ := redis.String(node.Do("GET", key)) // "" for a line
			t.Errorf("left on the server %s: %q (value %q) with PTTL %d ms, %v; want no lock, and only lines and fencing counters that expire within %v", node.Addr(), key, v, pttl, err, within)
		}
	}
}

// CommandCalls is the calls count of cmd (lower case) in node's INFO
// commandstats, 0 when it was never called.
func CommandCalls(t testing.TB, node *redistest.Node, cmd string) int {
	t.Helper()
	calls, _ := commandStat(t, commandStats(t, node), cmd)
	return calls
}

// WaitCommandCalls waits until node has run cmd (lower case, as
// CommandCalls counts it) at least n times, or fails the test after 10 s.
// A test waits so for a step it can see only in the server's counts: a
// waiter's attempt right after it subscribed, say, which runs PUBSUB
// NUMSUB.
func WaitCommandCalls(t testing.TB, node *redistest.Node, cmd string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		got := CommandCalls(t, node, cmd)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s ran %d times on %s in 10 s, want at least %d", cmd, got, node.Addr(), n)
		}
	}
}

// ScriptsRun is how many scripts node ran by EVALSHA or EVAL, as its INFO
// commandstats counts them: calls that failed (a NOSCRIPT, which the
// EVAL after it runs, or a script's error) are not counted.
func ScriptsRun(t testing.TB, node *redistest.Node) int {
	t.Helper()
	stats := commandStats(t, node)
	n := 0
	for _, cmd := range []string{"evalsha", "eval"} {
		calls, failed := commandStat(t, stats, cmd)
		n += calls - failed
	}
	return n
}

// commandStats is node's INFO commandstats, by field.
func commandStats(t testing.TB, node *redistest.Node) map[string]string {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatalf("INFO commandstats = %v", err)
	}
	return redisinfo.Fields(info)
}

// commandStat is cmd's (lower case) calls and failed calls in stats, 0
// when it was never called.
func commandStat(t testing.TB, stats map[string]string, cmd string) (calls, failed int) {
	t.Helper()
	stat, ok := stats["cmdstat_"+cmd]
	if !ok {
		return 0, 0
	}
	for field := range strings.SplitSeq(stat, ",") {
		k, v, _ := strings.Cut(field, "=")
		var err error
		switch k {
		case "calls":
			calls, err = strconv.Atoi(v)
		case "failed_calls":
			failed, err = strconv.Atoi(v)
		}
		if err != nil {
			t.Fatalf("INFO commandstats %s = %q: %v", cmd, stat, err)
		}
	}
	return calls, failed
}

package redistest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// mustDo runs a command on a fresh connection to node and fails the test on
// any error.
func mustDo(t *testing.T, node *Node, cmd string, args ...any) any {
	t.Helper()
	reply, err := node.Do(cmd, args...)
	if err != nil {
		t.Fatalf("%s %v on %s: %v", cmd, args, node.Addr(), err)
	}
	return reply
}

// getString returns the string value of key on node, or "" and false when
// the key does not exist.
func getString(t *testing.T, node *Node, key string) (string, bool) {
	t.Helper()
	v, err := redis.String(node.Do("GET", key))
	if errors.Is(err, redis.ErrNil) {
		return "", false
	}
	if err != nil {
		t.Fatalf("GET %s on %s: %v", key, node.Addr(), err)
	}
	return v, true
}

// poolDo runs a command on a connection borrowed from node's pool.
func poolDo(node *Node, cmd string, args ...any) (any, error) {
	c := node.Pool().Get()
	defer c.Close()
	return c.Do(cmd, args...)
}

// checkBackend fails the test when LOCKZOO_REDIS_BACKEND forces a backend
// and node runs on another.
func checkBackend(t *testing.T, node *Node) {
	t.Helper()
	if want := os.Getenv(envBackend); want != "" && node.Backend() != want {
		t.Fatalf("Backend() = %q, want %q as %s says", node.Backend(), want, envBackend)
	}
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fatalRecorder is a testing.TB whose Fatalf and Skip methods record the
// message and stop the calling goroutine, as the real ones do, without
// ending the test.
type fatalRecorder struct {
	testing.TB
	fatal, skip string
}

// Fatalf records the message and ends the goroutine.
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Skip records the message and ends the goroutine.
func (f *fatalRecorder) Skip(args ...any) { f.skip = fmt.Sprint(args...); runtime.Goexit() }

// Skipf records the message and ends the goroutine.
func (f *fatalRecorder) Skipf(format string, args ...any) {
	f.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// SkipNow records the skip and ends the goroutine.
func (f *fatalRecorder) SkipNow() { f.skip = "SkipNow"; runtime.Goexit() }

// runStart calls Start on a fatalRecorder in a goroutine of its own, which
// Fatalf may end, and returns what it recorded.
func runStart(t *testing.T, n int, opts ...Option) *fatalRecorder {
	t.Helper()
	f := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, n, opts...)
	}()
	<-done
	return f
}

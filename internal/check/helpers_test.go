package check

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// runJSON runs the check with -json and args, and returns the report and
// the exit status, which must agree with the report's.
func runJSON(t *testing.T, args ...string) (*Report, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), append([]string{"-json"}, args...), &out, &errOut)
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("check %v: stdout is not a report: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
	}
	if code != rep.Exit {
		t.Fatalf("check %v: exit status %d, the report says %d", args, code, rep.Exit)
	}
	return &rep, code
}

// findingOf returns the report's finding of family for addr (addr "" for
// the independence finding), failing the test when there is none.
func findingOf(t *testing.T, rep *Report, addr, family string) Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Hazard == family && (addr == "" || f.Addr == addr) {
			return f
		}
	}
	t.Fatalf("no %s finding for %q in %+v", family, addr, rep.Findings)
	return Finding{}
}

// brokenBy returns the techniques a finding breaks prop of, in order.
func brokenBy(f Finding, prop string) []string {
	var out []string
	for _, b := range f.Breaks {
		if slices.Contains(b.Properties, prop) {
			out = append(out, b.Technique)
		}
	}
	return out
}

// configure runs CONFIG SET name value ... on node.
func configure(t *testing.T, node *redistest.Node, nameValues ...any) {
	t.Helper()
	if _, err := node.Do("CONFIG", append([]any{"SET"}, nameValues...)...); err != nil {
		t.Fatalf("CONFIG SET %v on %s: %v", nameValues, node.Addr(), err)
	}
}

// assertEmpty fails the test when node holds a key: the check leaves
// nothing behind.
func assertEmpty(t *testing.T, node *redistest.Node) {
	t.Helper()
	keys, err := redis.Strings(node.Do("KEYS", "*"))
	if err != nil || len(keys) > 0 {
		t.Errorf("keys left on %s after the check: %q, %v; want none", node.Addr(), keys, err)
	}
}

// mustContain fails the test when s lacks want.
func mustContain(t *testing.T, what, s, want string) {
	t.Helper()
	if !strings.Contains(s, want) {
		t.Errorf("%s = %q, want it to contain %q", what, s, want)
	}
}

// harnessServer names the server internal/redistest runs, as the version
// finding names it: "valkey" under LOCKZOO_REDIS_SERVER=valkey-server,
// else "redis".
func harnessServer() string {
	if strings.Contains(os.Getenv("LOCKZOO_REDIS_SERVER"), "valkey") {
		return "valkey"
	}
	return "redis"
}

package locktest

import (
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// stat returns the counter name of node's INFO stats section (e.g.
// "total_commands_processed"). It calls t.Fatalf when INFO fails, or the
// section has no such field or not a whole number in it.
func stat(t testing.TB, node *redistest.Node, name string) int64 {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "stats"))
	if err != nil {
		t.Fatalf("INFO stats = %v, want a reply", err)
	}
	v, ok := redisinfo.Fields(info)[name]
	if !ok {
		t.Fatalf("INFO stats has no %s: %q", name, info)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO stats %s = %q: %v", name, v, err)
	}
	return n
}

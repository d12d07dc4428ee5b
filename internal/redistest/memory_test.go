package redistest

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func TestExhaustMemory(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	mustDo(t, node, "SET", "before", "1")
	node.ExhaustMemory()

	isOOM := func(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "OOM") }
	if _, err := node.Do("SET", "k", "v"); !isOOM(err) {
		t.Errorf("SET on an exhausted node = %v, want an OOM error", err)
	}
	if v, _ := getString(t, node, "before"); v != "1" {
		t.Errorf("GET before on an exhausted node = %q, want \"1\" (reads still work)", v)
	}
	// A transaction is refused as it is queued: EXEC then aborts.
	c := node.Pool().Get()
	defer c.Close()
	if err := c.Send("MULTI"); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("DEL", "before"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Do("EXEC")
	if !isOOM(err) {
		t.Errorf("MULTI DEL EXEC on an exhausted node = %v, want an OOM error", err)
	}
	if v, _ := getString(t, node, "before"); v != "1" {
		t.Errorf("GET before after the refused transaction = %q, want \"1\"", v)
	}

	node.RestoreMemory()
	if ok, err := redis.String(node.Do("SET", "k", "v")); err != nil || ok != "OK" {
		t.Errorf("SET after RestoreMemory = %q, %v; want OK", ok, err)
	}
	if n, err := redis.Int(node.Do("EXISTS", fillerKey)); err != nil || n != 0 {
		t.Errorf("EXISTS %s after RestoreMemory = %d, %v; want 0", fillerKey, n, err)
	}
}

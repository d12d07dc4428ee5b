package redistest

import (
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Memory exhaustion. The filler makes the node's usage well above what it
// needs idle, so that the limit ExhaustMemory sets stays below the usage
// even when buffers are freed meanwhile.
const (
	fillerKey  = "redistest:filler"
	fillerSize = 1 << 20
)

// ExhaustMemory puts the node over its memory limit with nothing it may
// evict: it writes a 1 MiB filler key (redistest:filler), sets
// maxmemory-policy noeviction and sets maxmemory to half the memory the
// node then uses. From then on Redis refuses with an OOM error every command
// that may grow memory (SET, SETNX, INCR, a script's first write) and every
// command queued inside MULTI, so such a transaction fails as a whole;
// reads, and DEL, EXPIRE and PUBLISH outside MULTI, still work.
// RestoreMemory lifts the limit.
// On failure it calls t.Fatalf, so call it from the test's goroutine.
func (n *Node) ExhaustMemory() {
	n.t.Helper()
	if err := n.exhaustMemory(); err != nil {
		n.t.Fatalf("redistest: ExhaustMemory %s: %v", n.addr, err)
	}
}

func (n *Node) exhaustMemory() error {
	if _, err := n.Do("SET", fillerKey, strings.Repeat("x", fillerSize)); err != nil {
		return fmt.Errorf("SET %s: %w", fillerKey, err)
	}
	if _, err := n.Do("CONFIG", "SET", "maxmemory-policy", "noeviction"); err != nil {
		return fmt.Errorf("CONFIG SET maxmemory-policy noeviction: %w", err)
	}
	info, err := redis.String(n.Do("INFO", "memory"))
	if err != nil {
		return fmt.Errorf("INFO memory: %w", err)
	}
	var used int64
	if _, err := fmt.Sscan(redisinfo.Fields(info)["used_memory"], &used); err != nil || used < fillerSize {
		return fmt.Errorf("INFO memory: used_memory %q, want at least %d", redisinfo.Fields(info)["used_memory"], fillerSize)
	}
	if _, err := n.Do("CONFIG", "SET", "maxmemory", used/2); err != nil {
		return fmt.Errorf("CONFIG SET maxmemory %d: %w", used/2, err)
	}
	return nil
}

// RestoreMemory undoes ExhaustMemory: it lifts the memory limit (maxmemory
// 0) and deletes the filler key. Restoring a node whose memory was not
// exhausted does nothing harmful. On failure it calls t.Fatalf.
func (n *Node) RestoreMemory() {
	n.t.Helper()
	if _, err := n.Do("CONFIG", "SET", "maxmemory", 0); err != nil {
		n.t.Fatalf("redistest: RestoreMemory %s: CONFIG SET maxmemory 0: %v", n.addr, err)
	}
	if _, err := n.Do("DEL", fillerKey); err != nil {
		n.t.Fatalf("redistest: RestoreMemory %s: DEL %s: %v", n.addr, fillerKey, err)
	}
}

package redistest

import (
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Follow makes the node a replica of m (REPLICAOF m), as a failover
// re-points the surviving replicas and the old primary at the promoted
// one, and returns once its link to m is up and its sync is done.
func (n *Node) Follow(m *Node) {
	n.t.Helper()
	host, port := m.srv.peer()
	if _, err := n.Do("REPLICAOF", host, port); err != nil {
		n.t.Fatalf("redistest: Follow: REPLICAOF %s %s on %s: %v", host, port, n.addr, err)
	}
	if err := waitSynced(n.addr, syncTimeout); err != nil {
		n.t.Fatalf("redistest: Follow: %s replicating %s: %v", n.addr, m.addr, err)
	}
}

// ReplOffset returns how far the node has processed its replication
// stream: master_repl_offset from INFO replication (a replica's offset
// is its master's as far as it received it). A failover that promotes the
// replica with the highest offset promotes the most up-to-date one.
func (n *Node) ReplOffset() (int64, error) {
	info, err := redis.String(n.Do("INFO", "replication"))
	if err != nil {
		return 0, fmt.Errorf("redistest: INFO replication of %s: %w", n.addr, err)
	}
	off, err := strconv.ParseInt(redisinfo.Fields(info)["master_repl_offset"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("redistest: master_repl_offset of %s: %w", n.addr, err)
	}
	return off, nil
}

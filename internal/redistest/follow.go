package redistest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Follow makes the node a replica of m (REPLICAOF m), as a failover
// re-points the surviving replicas and the old primary at the promoted
// one, and returns once its link to m is up and its sync is done.
func (n *Node) Follow(m *Node) {
	n.t.Helper()
	if err := m.adopt(n); err != nil {
		n.t.Fatalf("redistest: Follow: %v", err)
	}
}

// Adopt makes every one of nodes a replica of n at once (REPLICAOF n on
// each, then the waits together), as Sentinel with parallel-syncs at
// every replica re-points the survivors of a failover at the promoted
// one, and returns once each one's link is up and its sync is done.
func (n *Node) Adopt(nodes ...*Node) {
	n.t.Helper()
	if err := n.adopt(nodes...); err != nil {
		n.t.Fatalf("redistest: Adopt: %v", err)
	}
}

// adopt sends REPLICAOF m to every node, then waits until each is in
// sync with m.
func (m *Node) adopt(nodes ...*Node) error {
	host, port := m.srv.peer()
	for _, r := range nodes {
		if _, err := r.Do("REPLICAOF", host, port); err != nil {
			return fmt.Errorf("REPLICAOF %s %s on %s: %w", host, port, r.addr, err)
		}
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, r := range nodes {
		wg.Go(func() {
			if err := waitSynced(r.addr, syncTimeout); err != nil {
				errs[i] = fmt.Errorf("%s replicating %s: %w", r.addr, m.addr, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
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

// AwaitAcks returns once k replicas acknowledge the node's writes (WAIT),
// or fails the test after syncTimeout. A replica that has just synced may
// leave its first acknowledgement for a second (its periodic REPLCONF
// ACK); a test whose Lockers wait for replicas (strategy.Config.Replicas)
// calls it first. It writes no key: its probe is a PUBLISH, which
// replicates.
func (n *Node) AwaitAcks(k int) {
	n.t.Helper()
	c := n.pool.Get()
	defer func() { c.Close() }()
	deadline := time.Now().Add(syncTimeout)
	for {
		_, err := c.Do("PUBLISH", "redistest:acks", "probe")
		got, werr := redis.Int(c.Do("WAIT", k, 100))
		if err == nil && werr == nil && got >= k {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("redistest: AwaitAcks: %d of %d replicas of %s acknowledged within %v (%v, %v)", got, k, n.addr, syncTimeout, err, werr)
		}
		if err != nil || werr != nil {
			c.Close()
			c = n.pool.Get()
		}
	}
}

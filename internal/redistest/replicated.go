package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// StartReplicated starts a primary and n replicas of it (REPLICAOF), on the
// same backend and with the same options, and returns once every replica's
// link to the primary is up and its initial sync is done. The replicas
// start together, so n of them take about as long as one. Everything is
// torn down when the test ends.
//
// In containers each replica announces the address at which the host and
// the other containers reach it (replica-announce-ip and -port: the bridge
// gateway and its published port), so INFO replication and a Sentinel name
// reachable replicas on either backend.
//
// On any failure it calls t.Fatalf saying why; it never skips the test.
func StartReplicated(t TB, n int, opts ...Option) (primary *Node, replicas []*Node) {
	t.Helper()
	if n < 1 {
		t.Fatalf("redistest: StartReplicated needs at least one replica, got %d", n)
	}
	primary = Start(t, 1, append(opts, withAnnounce())...)[0]
	replicas, err := startReplicas(primary, n)
	if err != nil {
		t.Fatalf("redistest: StartReplicated: %v", err)
	}
	return primary, replicas
}

// startReplicas launches n replicas of primary concurrently and waits for
// each to sync. The replicas that started are returned (and torn down at
// the end of the test) even when others failed.
func startReplicas(primary *Node, n int) ([]*Node, error) {
	host, port := primary.srv.peer()
	spec := primary.spec
	spec.replicaHost, spec.replicaPort = host, port
	servers, err := launchAll(primary.be, spec, n)
	replicas := make([]*Node, 0, n)
	for _, srv := range servers {
		if srv != nil {
			replicas = append(replicas, newNode(primary.t, primary.be, srv, spec))
		}
	}
	if err != nil {
		return replicas, fmt.Errorf("start %d replica(s) of %s: %w", n, primary.Addr(), err)
	}
	return replicas, awaitSynced(primary, replicas)
}

// awaitSynced waits, for every one of replicas at once, until its link to
// primary is up and its sync is done.
func awaitSynced(primary *Node, replicas []*Node) error {
	errs := make([]error, len(replicas))
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() {
			if err := waitSynced(r.Addr(), syncTimeout); err != nil {
				errs[i] = fmt.Errorf("replica %s of %s: %w", r.Addr(), primary.Addr(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// withAnnounce makes the nodes announce their peer address as replicas
// (serverSpec.announce), now or after a failover makes them one.
func withAnnounce() Option {
	return func(o *options) { o.announce = true }
}

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
	return awaitSynced(m, nodes)
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
	if err := n.AcksWithin(context.Background(), k, syncTimeout); err != nil {
		n.t.Fatalf("redistest: AwaitAcks: %v", err)
	}
}

// AcksWithin waits, as AwaitAcks does, until k replicas acknowledge the
// node's writes, for at most within. It returns an error saying how many
// did when they did not, or ctx's error when ctx ends first.
func (n *Node) AcksWithin(ctx context.Context, k int, within time.Duration) error {
	c := n.pool.Get()
	defer func() { c.Close() }()
	deadline := time.Now().Add(within)
	for {
		_, err := c.Do("PUBLISH", "redistest:acks", "probe")
		got, werr := redis.Int(c.Do("WAIT", k, 100))
		switch {
		case err == nil && werr == nil && got >= k:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Now().After(deadline):
			return fmt.Errorf("%d of %d replicas of %s acknowledged within %v (%v, %v)", got, k, n.addr, within, err, werr)
		case err != nil || werr != nil:
			c.Close()
			c = n.pool.Get()
			time.Sleep(10 * time.Millisecond) // a failing node answers at once
		}
	}
}

package redistest

import (
	"errors"
	"fmt"
	"sync"
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
	return replicas, errors.Join(errs...)
}

// withAnnounce makes the nodes announce their peer address as replicas
// (serverSpec.announce), now or after a failover makes them one.
func withAnnounce() Option {
	return func(o *options) { o.announce = true }
}

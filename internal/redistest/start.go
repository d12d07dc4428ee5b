package redistest

import (
	"errors"
	"fmt"
	"sync"
)

// Start starts n fresh, independent Redis masters and tears them down when
// the test ends (t.Cleanup). It picks the backend as the package
// documentation describes and logs its choice. When no backend can run
// Redis, or a node fails to start, it calls t.Fatalf saying why and what to
// install; it never skips the test.
func Start(t TB, n int, opts ...Option) []*Node {
	t.Helper()
	if n < 1 {
		t.Fatalf("redistest: Start needs at least one node, got %d", n)
	}
	o := buildOptions(opts)
	if o.clusterReplicas {
		t.Fatalf("redistest: Start does not take WithClusterReplicas (Node.StartReplica starts a replica)")
	}
	spec := serverSpec{persist: o.persist, flags: o.flags, announce: o.announce}
	if o.withACL {
		var err error
		if spec.acl, err = aclText(o.acl); err != nil {
			t.Fatalf("redistest: WithACL: %v", err)
		}
	}
	be, err := chooseBackend(t.Name(), t.TempDir)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Logf("redistest: %d node(s) on backend %s (%s)", n, be.name(), be.describe())

	servers, err := launchAll(be, spec, n)
	nodes := make([]*Node, 0, n)
	for _, srv := range servers {
		if srv != nil {
			nodes = append(nodes, newNode(t, be, srv, spec))
		}
	}
	if err != nil {
		t.Fatalf("redistest: start %d %s node(s): %v", n, be.name(), err)
	}
	return nodes
}

// launchAll launches n servers concurrently, since a container takes a while
// to start; its goroutines end before it returns. The servers that started
// are returned (nil where one failed) even when others failed, so that the
// caller can tear them down.
func launchAll(be backend, spec serverSpec, n int) ([]server, error) {
	servers := make([]server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			srv, err := be.launch(spec)
			if err != nil {
				errs[i] = fmt.Errorf("node %d: %w", i, err)
				return
			}
			servers[i] = srv
		})
	}
	wg.Wait()
	return servers, errors.Join(errs...)
}

// Option configures the nodes that Start creates.
type Option func(*options)

// options is the configuration that Options fill in.
type options struct {
	persist bool
	// withACL gives the nodes an ACL file defining acl (WithACL).
	withACL bool
	acl     []ACLUser
	// flags are more redis-server flags (WithFlags).
	flags []string
	// clusterReplicas gives each master of a cluster a replica
	// (WithClusterReplicas).
	clusterReplicas bool
	// announce: the nodes announce their peer address as replicas
	// (StartReplicated, StartSentinel).
	announce bool
}

// WithFlags passes more flags to every node's redis-server, after the
// harness's own, e.g. WithFlags("--rename-command", "GETSET", "") for a
// server without GETSET. A replica gets them too; a flag Redis refuses
// makes Start fail.
func WithFlags(flags ...string) Option {
	return func(o *options) { o.flags = append(o.flags, flags...) }
}

// WithPersistence makes the nodes write every command to an append-only file
// that is fsynced before the reply (appendonly yes, appendfsync always), so
// their data survives Node.Kill followed by Node.Restart.
func WithPersistence() Option {
	return func(o *options) { o.persist = true }
}

// buildOptions applies opts to the default configuration.
func buildOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

package redistest

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Node is one Redis server started by Start or Node.StartReplica, alive until
// the end of the test that started it.
//
// Addr, Pool, PoolAs, Do and Backend may be called from any goroutine. The methods
// that inject faults (Kill, Restart, Pause, Resume, StartReplica, Promote)
// report failures with t.Fatalf on the TB given to Start, so like
// t.Fatalf they must be called from the test's goroutine.
type Node struct {
	t    TB
	be   backend
	srv  server
	spec serverSpec
	addr string
	pool *redis.Pool
	// killedAt is when the latest Kill (or the kill inside Restart)
	// completed; nil before the first one.
	killedAt atomic.Pointer[time.Time]
	// paused is set by Pause and cleared by Resume and Kill, so that Resume
	// of a running node does nothing on every backend (docker refuses to
	// unpause a container that is not paused).
	paused atomic.Bool

	// mu guards pools.
	mu sync.Mutex
	// pools are the pools PoolAs made, closed with the node.
	pools []*redis.Pool
}

// newNode wraps a running server and registers its teardown with t.Cleanup.
// The server owns its port lease; the node keeps spec without it.
func newNode(t TB, be backend, srv server, spec serverSpec) *Node {
	spec.lease = nil
	n := &Node{t: t, be: be, srv: srv, spec: spec, addr: srv.addr()}
	n.pool = newPool(n.addr, n.lastKill)
	t.Cleanup(n.cleanup)
	return n
}

// Addr returns the node's "127.0.0.1:port" address. It stays the same across
// Kill and Restart.
func (n *Node) Addr() string { return n.addr }

// Pool returns the node's connection pool, the same one on every call; it is
// closed when the test ends. It never lends a connection last used before
// the node's latest Kill, and it keeps the connections of a paused node.
func (n *Node) Pool() *redis.Pool { return n.pool }

// NewPool returns a new pool over the node with the same settings as Pool
// and connections of its own, which no other pool has used (or named); it
// is closed when the test ends.
func (n *Node) NewPool() *redis.Pool { return n.addPool() }

// addPool returns a new pool over the node, dialing with opts, and closes
// it with the node's other pools when the test ends.
func (n *Node) addPool(opts ...redis.DialOption) *redis.Pool {
	p := newPool(n.addr, n.lastKill, opts...)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pools = append(n.pools, p)
	return p
}

// Backend returns "docker" or "process": where the node runs.
func (n *Node) Backend() string { return n.be.name() }

// Do sends one command on a new connection, closed afterwards, and returns
// the reply. Dialing and the exchange together time out after 2 s. An error
// reply is returned as a redis.Error.
func (n *Node) Do(cmd string, args ...any) (any, error) {
	return doTimed(doTimeout, n.addr, cmd, args...)
}

// lastKill returns when the latest kill completed, or the zero time.
func (n *Node) lastKill() time.Time {
	if k := n.killedAt.Load(); k != nil {
		return *k
	}
	return time.Time{}
}

// markKilled records that the server has just been killed, so that the pool
// drops every connection last used before now.
func (n *Node) markKilled() {
	now := time.Now()
	n.killedAt.Store(&now)
}

// cleanup closes the pool and tears the server down.
func (n *Node) cleanup() {
	n.mu.Lock()
	pools := append([]*redis.Pool{n.pool}, n.pools...)
	n.mu.Unlock()
	for _, p := range pools {
		if err := p.Close(); err != nil {
			n.t.Errorf("redistest: close pool of %s: %v", n.addr, err)
		}
	}
	if err := n.srv.destroy(); err != nil {
		n.t.Errorf("redistest: tear down %s node %s: %v", n.be.name(), n.addr, err)
	}
}

// Kill kills the node's server with SIGKILL (docker kill for a container)
// and returns once it is gone: commands fail and the data held only in
// memory is lost. Connections of the node's pool that were last used
// before now are discarded when next borrowed. Killing a killed node does
// nothing.
func (n *Node) Kill() {
	n.t.Helper()
	if err := n.srv.kill(); err != nil {
		n.t.Fatalf("redistest: Kill %s: %v", n.addr, err)
	}
	n.paused.Store(false)
	n.markKilled()
}

// Restart starts the node's server again on the same address, killing it
// first if it still runs, and returns once it is ready (on the process
// backend: INFO server on its address names the new process; the port
// stays leased to the node while it is down, so no other test takes it).
// When the server does not come back, Restart calls t.Fatalf with its log. The node comes
// back empty, unless Start was given WithPersistence. A replica comes back as
// a replica of the same master.
func (n *Node) Restart() {
	n.t.Helper()
	n.Kill()
	if err := n.srv.start(); err != nil {
		n.t.Fatalf("redistest: Restart %s: %v", n.addr, err)
	}
}

// Pause freezes the node's server (SIGSTOP, or docker pause): connections
// stay open and new ones are accepted, but commands get no reply until
// Resume. The node's pool keeps its connections.
func (n *Node) Pause() {
	n.t.Helper()
	if err := n.srv.pause(); err != nil {
		n.t.Fatalf("redistest: Pause %s: %v", n.addr, err)
	}
	n.paused.Store(true)
}

// Resume thaws a paused node (SIGCONT, or docker unpause); the commands
// sent meanwhile are then served. Resuming a node that is not paused does
// nothing, so a test may both Resume and register Resume as a cleanup.
func (n *Node) Resume() {
	n.t.Helper()
	if !n.paused.Swap(false) {
		return
	}
	if err := n.srv.resume(); err != nil {
		n.t.Fatalf("redistest: Resume %s: %v", n.addr, err)
	}
}

// syncTimeout bounds the wait for a new replica's initial sync.
const syncTimeout = 10 * time.Second

// StartReplica starts a new node, on the same backend and with the same
// options, that replicates n (REPLICAOF), and returns once its link to n is
// up and the initial sync is done: it then holds everything written to n
// before the call. The replica is torn down when the test ends.
func (n *Node) StartReplica() *Node {
	n.t.Helper()
	host, port := n.srv.peer()
	spec := serverSpec{persist: n.spec.persist, acl: n.spec.acl, flags: n.spec.flags, announce: n.spec.announce, replicaHost: host, replicaPort: port}
	srv, err := n.be.launch(spec)
	if err != nil {
		n.t.Fatalf("redistest: StartReplica of %s: %v", n.addr, err)
	}
	r := newNode(n.t, n.be, srv, spec)
	if err := waitSynced(r.addr, syncTimeout); err != nil {
		n.t.Fatalf("redistest: StartReplica of %s: replica %s: %v", n.addr, r.addr, err)
	}
	return r
}

// Promote turns the node into a master (REPLICAOF NO ONE): it keeps its data
// and accepts writes.
func (n *Node) Promote() {
	n.t.Helper()
	if _, err := n.Do("REPLICAOF", "NO", "ONE"); err != nil {
		n.t.Fatalf("redistest: Promote %s: %v", n.addr, err)
	}
}

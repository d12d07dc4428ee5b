package redistest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Bounds of the waits on Sentinels.
const (
	// sentinelReadyTimeout bounds the wait for the Sentinels to link to
	// each other and read the replicas' INFO.
	sentinelReadyTimeout = 20 * time.Second
	// failoverWait bounds the wait for a failover, beyond the
	// Sentinels' down-after and failover timeouts.
	failoverWait = 30 * time.Second
	// sentinelPoll is the pause between two polls of the Sentinels.
	sentinelPoll = 20 * time.Millisecond
)

// Sentinel is a primary with replicas under Sentinels, started by
// StartSentinel and torn down when the test ends. Its methods report
// failures with t.Fatalf on the TB given to StartSentinel, so they must be
// called from the test's goroutine; the Nodes they return may be used
// from any goroutine.
type Sentinel struct {
	t         TB
	cfg       SentinelConfig
	nodes     []*Node // the data nodes; the first was the primary at the start
	sentinels []*Node
	// ready: every Sentinel has known the others and the replicas.
	ready bool
}

// Name returns the master name the Sentinels monitor.
func (s *Sentinel) Name() string { return s.cfg.Name }

// Addrs returns the Sentinels' "127.0.0.1:port" addresses.
func (s *Sentinel) Addrs() []string {
	addrs := make([]string, len(s.sentinels))
	for i, n := range s.sentinels {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Sentinels returns the Sentinels as Nodes (Kill, Restart, Pause and Do
// work on them as on data nodes).
func (s *Sentinel) Sentinels() []*Node { return append([]*Node(nil), s.sentinels...) }

// Nodes returns the data nodes, the primary of the start first.
func (s *Sentinel) Nodes() []*Node { return append([]*Node(nil), s.nodes...) }

// NodeAt returns the data node at addr, its Addr or the address it
// announces (which a Sentinel reports), or nil when none is there.
func (s *Sentinel) NodeAt(addr string) *Node {
	for _, n := range s.nodes {
		if n.Addr() == addr || n.peerAddr() == addr {
			return n
		}
	}
	return nil
}

// Master returns the data node the first Sentinel that answers names as
// the master (SENTINEL GET-MASTER-ADDR-BY-NAME).
func (s *Sentinel) Master() *Node {
	s.t.Helper()
	var errs []error
	for _, sn := range s.sentinels {
		addr, err := masterAddr(sn, s.cfg.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n := s.NodeAt(addr); n != nil {
			return n
		}
		errs = append(errs, fmt.Errorf("sentinel %s names %s, none of the data nodes", sn.Addr(), addr))
	}
	s.t.Fatalf("redistest: no sentinel names the master %s: %v", s.cfg.Name, errors.Join(errs...))
	return nil
}

// masterAddr asks the Sentinel sn for the address of the master name.
func masterAddr(sn *Node, name string) (string, error) {
	reply, err := redis.Strings(sn.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name))
	switch {
	case errors.Is(err, redis.ErrNil):
		return "", fmt.Errorf("sentinel %s does not know %s", sn.Addr(), name)
	case err != nil:
		return "", fmt.Errorf("sentinel %s: %w", sn.Addr(), err)
	case len(reply) != 2:
		return "", fmt.Errorf("sentinel %s: GET-MASTER-ADDR-BY-NAME %s = %q, want [ip port]", sn.Addr(), name, reply)
	}
	return net.JoinHostPort(reply[0], reply[1]), nil
}

// AwaitReady returns once the Sentinels know each other and the
// replicas, so that a failover can begin as soon as the master is found
// down (KillMaster and Failover wait for it too). A test that kills the
// master itself (Node.Kill, after freezing its replicas, say) calls it
// first.
func (s *Sentinel) AwaitReady() {
	s.t.Helper()
	s.waitReady()
}

// KillMaster waits until the Sentinels know each other and the replicas,
// then kills the master (Node.Kill) and returns it; WaitFailover waits for
// its successor.
func (s *Sentinel) KillMaster() *Node {
	s.t.Helper()
	s.waitReady()
	m := s.Master()
	m.Kill()
	return m
}

// Failover waits until the Sentinels know each other and the replicas,
// then asks one to fail the master over (SENTINEL FAILOVER, asked again
// while a Sentinel answers that it cannot yet: a failover in progress, no
// replica good enough), and returns the old and the new master once every
// Sentinel names the new one (WaitFailover).
func (s *Sentinel) Failover() (old, promoted *Node) {
	s.t.Helper()
	s.waitReady()
	old = s.Master()
	deadline := time.Now().Add(failoverWait)
	for i := 0; ; i++ {
		sn := s.sentinels[i%len(s.sentinels)]
		_, err := sn.Do("SENTINEL", "FAILOVER", s.cfg.Name)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: SENTINEL FAILOVER %s: %v", s.cfg.Name, err)
		}
		time.Sleep(sentinelPoll)
	}
	return old, s.WaitFailover(old)
}

// WaitFailover waits until every Sentinel that answers names a master
// other than old, and that node answers ROLE as a master, and returns
// it. It waits for the Sentinels' down-after and failover timeouts and 30 s
// more at most, then calls t.Fatalf with what they said last.
func (s *Sentinel) WaitFailover(old *Node) *Node {
	s.t.Helper()
	deadline := time.Now().Add(s.cfg.DownAfter + 2*s.cfg.FailoverTimeout + failoverWait)
	var last string
	for {
		n, why := s.newMaster(old)
		if n != nil {
			return n
		}
		last = why
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: no failover of %s away from %s: %s", s.cfg.Name, old.Addr(), last)
		}
		time.Sleep(sentinelPoll)
	}
}

// newMaster returns the master every answering Sentinel names, when it is
// not old and answers ROLE as a master; else nil and why not.
func (s *Sentinel) newMaster(old *Node) (*Node, string) {
	var named *Node
	for _, sn := range s.sentinels {
		addr, err := masterAddr(sn, s.cfg.Name)
		if err != nil {
			continue // a Sentinel the test stopped
		}
		n := s.NodeAt(addr)
		switch {
		case n == nil:
			return nil, fmt.Sprintf("sentinel %s names %s, none of the data nodes", sn.Addr(), addr)
		case n == old:
			return nil, fmt.Sprintf("sentinel %s still names %s", sn.Addr(), addr)
		case named != nil && n != named:
			return nil, fmt.Sprintf("sentinels name %s and %s", named.Addr(), n.Addr())
		}
		named = n
	}
	if named == nil {
		return nil, "no sentinel answers"
	}
	if role, err := Role(named); role != "master" {
		return nil, fmt.Sprintf("%s answers ROLE %q, %v", named.Addr(), role, err)
	}
	return named, ""
}

// Role returns the first element of the node's ROLE reply: "master",
// "slave" or "sentinel".
func Role(n *Node) (string, error) {
	reply, err := redis.Values(n.Do("ROLE"))
	if err != nil {
		return "", err
	}
	if len(reply) == 0 {
		return "", errors.New("empty ROLE reply")
	}
	return redis.String(reply[0], nil)
}

// waitReady waits, once per Sentinel set, until every Sentinel that
// answers PING is linked to the other live Sentinels and has fresh INFO
// from a replica (SENTINEL SENTINELS, SENTINEL REPLICAS), so that a
// failover can be agreed on and has a replica to promote.
func (s *Sentinel) waitReady() {
	s.t.Helper()
	if s.ready {
		return
	}
	deadline := time.Now().Add(sentinelReadyTimeout)
	var live []*Node
	for _, sn := range s.sentinels {
		if _, err := sn.Do("PING"); err == nil {
			live = append(live, sn) // not one the test stopped
		}
	}
	if len(live) == 0 {
		s.t.Fatalf("redistest: no sentinel of %v answers PING", s.Addrs())
	}
	for _, sn := range live {
		for {
			why := s.notReady(sn, len(live)-1)
			if why == "" {
				break
			}
			if time.Now().After(deadline) {
				s.t.Fatalf("redistest: sentinel %s not ready for a failover within %v: %s", sn.Addr(), sentinelReadyTimeout, why)
			}
			time.Sleep(sentinelPoll)
		}
	}
	s.ready = true
}

// replicaInfoFresh is how recent a Sentinel's last INFO from a replica
// must be for the replica to be promotable while the master is down.
const replicaInfoFresh = 5 * time.Second

// notReady says why the Sentinel sn cannot fail the master over yet: it
// is linked to fewer than others other Sentinels, or has no replica with
// fresh INFO; "" when it can.
func (s *Sentinel) notReady(sn *Node, others int) string {
	sentinels, err := instances(sn, "SENTINELS", s.cfg.Name)
	if err != nil {
		return err.Error()
	}
	linked := 0
	for _, f := range sentinels {
		if !strings.Contains(f["flags"], "disconnected") && !strings.Contains(f["flags"], "s_down") {
			linked++
		}
	}
	if linked < others {
		return fmt.Sprintf("linked to %d other sentinel(s), want %d: %v", linked, others, sentinels)
	}
	replicas, err := instances(sn, "REPLICAS", s.cfg.Name)
	if err != nil {
		return err.Error()
	}
	for _, f := range replicas {
		refresh, err := strconv.ParseInt(f["info-refresh"], 10, 64)
		if err == nil && time.Duration(refresh)*time.Millisecond < replicaInfoFresh &&
			!strings.Contains(f["flags"], "disconnected") && !strings.Contains(f["flags"], "s_down") {
			return ""
		}
	}
	return fmt.Sprintf("no replica with INFO of the last %v: %v", replicaInfoFresh, replicas)
}

// instances returns the fields of each instance SENTINEL <what> name lists
// on sn (what is SENTINELS or REPLICAS).
func instances(sn *Node, what, name string) ([]map[string]string, error) {
	reply, err := redis.Values(sn.Do("SENTINEL", what, name))
	if err != nil {
		return nil, fmt.Errorf("SENTINEL %s %s on %s: %w", what, name, sn.Addr(), err)
	}
	out := make([]map[string]string, 0, len(reply))
	for _, r := range reply {
		f, err := redis.StringMap(r, nil)
		if err != nil {
			return nil, fmt.Errorf("SENTINEL %s %s on %s: %w", what, name, sn.Addr(), err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Monitor makes every Sentinel monitor node as the master name too
// (SENTINEL MONITOR, then a down-after of ten minutes so that they leave
// it alone), as a misconfigured deployment would: a test names a replica
// this way to see a client refuse a "master" that is not one.
func (s *Sentinel) Monitor(name string, node *Node) {
	s.t.Helper()
	if strings.ContainsAny(name, " \t\r\n") {
		s.t.Fatalf("redistest: Monitor %q: want a name without spaces or line breaks", name)
	}
	host, port := node.srv.peer()
	for _, sn := range s.sentinels {
		if _, err := sn.Do("SENTINEL", "MONITOR", name, host, port, s.cfg.Quorum); err != nil {
			s.t.Fatalf("redistest: SENTINEL MONITOR %s %s %s on %s: %v", name, host, port, sn.Addr(), err)
		}
		if _, err := sn.Do("SENTINEL", "SET", name, "down-after-milliseconds", 600000); err != nil {
			s.t.Fatalf("redistest: SENTINEL SET %s on %s: %v", name, sn.Addr(), err)
		}
	}
}

package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// SentinelConfig says what StartSentinel starts. The zero value is a
// primary with 2 replicas under 3 Sentinels that fail a dead primary over
// within a few seconds.
type SentinelConfig struct {
	// Name is the master name the Sentinels monitor; "" means "mymaster".
	Name string
	// Replicas is how many replicas the primary gets; 0 means 2, and a
	// Sentinel needs at least one to fail the primary over to.
	Replicas int
	// Sentinels is how many Sentinels start; 0 means 3.
	Sentinels int
	// Quorum is how many Sentinels must agree that the primary is down;
	// 0 means a majority of them.
	Quorum int
	// DownAfter is the Sentinels' down-after-milliseconds: how long the
	// primary may fail to answer before a Sentinel deems it down; 0 means 1 s.
	DownAfter time.Duration
	// FailoverTimeout is the Sentinels' failover-timeout; 0 means 3 s.
	// A Sentinel waits twice as long before it fails the same master
	// over again on its own (SENTINEL FAILOVER does not wait).
	FailoverTimeout time.Duration
	// ParallelSyncs is the Sentinels' parallel-syncs: how many replicas a
	// failover re-points at the promoted one at a time; 0 means all of
	// them, so that the promoted primary gets its replicas back at once
	// (Sentinel's own default, 1, re-points one after another).
	ParallelSyncs int
	// SentinelUsers are ACL users of the Sentinels (user lines in
	// sentinel.conf), besides the user default with every right and no
	// password; the data nodes take theirs by WithACL.
	SentinelUsers []ACLUser
}

// withDefaults returns cfg with its zero fields filled in.
func (cfg SentinelConfig) withDefaults() SentinelConfig {
	if cfg.Name == "" {
		cfg.Name = "mymaster"
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 2
	}
	if cfg.Sentinels == 0 {
		cfg.Sentinels = 3
	}
	if cfg.Quorum == 0 {
		cfg.Quorum = cfg.Sentinels/2 + 1
	}
	if cfg.DownAfter == 0 {
		cfg.DownAfter = time.Second
	}
	if cfg.FailoverTimeout == 0 {
		cfg.FailoverTimeout = 3 * time.Second
	}
	if cfg.ParallelSyncs == 0 {
		cfg.ParallelSyncs = cfg.Replicas
	}
	return cfg
}

// check returns an error naming the first field out of range.
func (cfg SentinelConfig) check() error {
	switch {
	case strings.ContainsAny(cfg.Name, " \t\r\n"):
		return fmt.Errorf("Name %q: want a name without spaces or line breaks", cfg.Name)
	case cfg.Replicas < 1:
		return fmt.Errorf("Replicas = %d: want 1 or more (0 means 2)", cfg.Replicas)
	case cfg.Sentinels < 1:
		return fmt.Errorf("Sentinels = %d: want 1 or more", cfg.Sentinels)
	case cfg.Quorum < 1 || cfg.Quorum > cfg.Sentinels:
		return fmt.Errorf("Quorum = %d: want 1 to Sentinels (%d)", cfg.Quorum, cfg.Sentinels)
	case cfg.DownAfter < time.Millisecond || cfg.FailoverTimeout < time.Millisecond:
		return fmt.Errorf("DownAfter = %v, FailoverTimeout = %v: want 1ms or more", cfg.DownAfter, cfg.FailoverTimeout)
	case cfg.ParallelSyncs < 1:
		return fmt.Errorf("ParallelSyncs = %d: want 1 or more (0 means every replica)", cfg.ParallelSyncs)
	}
	return nil
}

// sentinelConfFile is the name of a Sentinel's configuration file, in its
// directory (or dockerDataDir).
const sentinelConfFile = "sentinel.conf"

// sentinelFlags returns the command line of a Sentinel that reads (and
// rewrites) the file conf and listens on port; the backend adds where to
// bind.
func sentinelFlags(conf, port string) []string {
	return []string{conf, "--sentinel", "--port", port, "--protected-mode", "no"}
}

// sentinelConf returns the text of sentinel.conf for cfg: monitor the
// primary at primary (host:port as the Sentinels reach it), with its
// replicas known from the start so that a failover can begin at once.
func sentinelConf(cfg SentinelConfig, primary string, replicas []string) (string, error) {
	var b strings.Builder
	host, port, err := net.SplitHostPort(primary)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "sentinel monitor %s %s %s %d\n", cfg.Name, host, port, cfg.Quorum)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", cfg.Name, cfg.DownAfter.Milliseconds())
	fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", cfg.Name, cfg.FailoverTimeout.Milliseconds())
	fmt.Fprintf(&b, "sentinel parallel-syncs %s %d\n", cfg.Name, cfg.ParallelSyncs)
	for _, r := range replicas {
		host, port, err := net.SplitHostPort(r)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "sentinel known-replica %s %s %s\n", cfg.Name, host, port)
	}
	users, err := aclText(cfg.SentinelUsers)
	if err != nil {
		return "", err
	}
	b.WriteString(users)
	return b.String(), nil
}

// StartSentinel starts a primary with cfg.Replicas replicas
// (StartReplicated; opts apply to these data nodes) and cfg.Sentinels
// Sentinels (`redis-server --sentinel`, or valkey-server's, with a
// generated sentinel.conf) that monitor the primary as cfg.Name, all on
// the backend Start picks, and tears them down when the test ends. It
// returns once every Sentinel answers and names the primary; the Sentinels
// may not know each other yet, which Failover and KillMaster wait for.
// On any failure it calls t.Fatalf saying why.
func StartSentinel(t TB, cfg SentinelConfig, opts ...Option) *Sentinel {
	t.Helper()
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		t.Fatalf("redistest: StartSentinel: %v", err)
	}
	primary, replicas := StartReplicated(t, cfg.Replicas, opts...)
	nodes := append([]*Node{primary}, replicas...)
	s := &Sentinel{t: t, cfg: cfg, nodes: nodes}
	peers := make([]string, len(nodes))
	for i, n := range nodes {
		peers[i] = n.peerAddr()
	}
	conf, err := sentinelConf(cfg, peers[0], peers[1:])
	if err != nil {
		t.Fatalf("redistest: StartSentinel: %v", err)
	}
	be := nodes[0].be
	host, _ := nodes[0].srv.peer()
	servers, specs, err := launchSentinels(be, conf, cfg, host)
	if err != nil {
		t.Fatalf("redistest: StartSentinel: %d sentinel(s): %v", cfg.Sentinels, err)
	}
	for i, srv := range servers {
		s.sentinels = append(s.sentinels, newNode(t, be, srv, specs[i]))
	}
	t.Logf("redistest: %d sentinel(s) monitor %s at %s with %d replica(s)", cfg.Sentinels, cfg.Name, peers[0], cfg.Replicas)
	return s
}

// peerAddr is the address at which other servers, and the host, reach the
// node: "127.0.0.1:port" on the process backend, the bridge gateway and
// the published port in a container. Replicas and Sentinels announce it.
func (n *Node) peerAddr() string {
	host, port := n.srv.peer()
	return net.JoinHostPort(host, port)
}

// launchSentinels starts cfg.Sentinels Sentinels that know each other from
// the start, so that they can agree on a failover at once rather than
// after their first hello messages (2 s): each gets a port chosen
// beforehand, an id of its own (sentinel myid) and the others as
// known-sentinel lines at host, where the data nodes also announce
// themselves. When a port was taken meanwhile (by a program that takes no
// leases), the whole set starts again on other ports. On error nothing is
// left running and nothing leased.
func launchSentinels(be backend, conf string, cfg SentinelConfig, host string) ([]server, []serverSpec, error) {
	var err error
	for range launchAttempts {
		specs, serr := sentinelSpecs(conf, cfg, host)
		if serr != nil {
			return nil, nil, serr
		}
		servers := make([]server, len(specs))
		errs := make([]error, len(specs))
		var wg sync.WaitGroup
		for i, spec := range specs {
			wg.Go(func() { servers[i], errs[i] = be.launch(spec) })
		}
		wg.Wait()
		if err = errors.Join(errs...); err == nil {
			return servers, specs, nil
		}
		for _, srv := range servers {
			if srv != nil {
				err = errors.Join(err, srv.destroy())
			}
		}
		if msg := err.Error(); !strings.Contains(msg, "already in use") && !portTaken(err) {
			return nil, nil, err
		}
	}
	return nil, nil, fmt.Errorf("no free ports after %d attempts: %w", launchAttempts, err)
}

// sentinelSpecs returns the specs of cfg.Sentinels Sentinels on distinct
// leased ports (each spec holds its lease, which launch takes over), each
// with conf, its own id and the others as known Sentinels at host. On
// error it holds nothing.
func sentinelSpecs(conf string, cfg SentinelConfig, host string) ([]serverSpec, error) {
	n := cfg.Sentinels
	leases, ids := make([]*portLease, n), make([]string, n)
	release := func() error {
		var err error
		for _, l := range leases {
			err = errors.Join(err, l.release())
		}
		return err
	}
	for i := range n {
		l, err := leasePort()
		if err != nil {
			return nil, errors.Join(err, release())
		}
		leases[i] = l
		id := make([]byte, 20)
		if _, err := rand.Read(id); err != nil {
			return nil, errors.Join(fmt.Errorf("sentinel id: %w", err), release())
		}
		ids[i] = hex.EncodeToString(id)
	}
	specs := make([]serverSpec, n)
	for i := range n {
		var b strings.Builder
		b.WriteString(conf)
		fmt.Fprintf(&b, "sentinel myid %s\n", ids[i])
		for j := range n {
			if j != i {
				fmt.Fprintf(&b, "sentinel known-sentinel %s %s %s %s\n", cfg.Name, host, leases[j].port, ids[j])
			}
		}
		specs[i] = serverSpec{lease: leases[i], sentinel: b.String()}
	}
	return specs, nil
}

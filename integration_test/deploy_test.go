package integration_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// contenders is how many Lockers (as separate processes would have) take
// one key in the deployment tests, and rounds how often each takes it.
const contenders, rounds = 4, 10

// newLockers builds n Lockers of target over pools.
func newLockers(t *testing.T, target strategytest.Target, pools []strategy.Pool, cfg strategy.Config, n int) []strategy.Locker {
	t.Helper()
	lockers := make([]strategy.Locker, n)
	for i := range lockers {
		l, err := target.New(pools, cfg)
		if err != nil {
			t.Fatalf("%s: New() = %v, want nil", target.Name, err)
		}
		locktest.CloseOnCleanup(t, l)
		lockers[i] = l
	}
	return lockers
}

// notices listens, as the harness's own user, to every channel on node
// and counts the messages by channel and body kind until the test ends.
type notices struct {
	mu       sync.Mutex
	channels map[string]int
	kinds    map[string]int // "handoff", "head" or "" (anyone)
}

func listen(t *testing.T, node *redistest.Node) *notices {
	t.Helper()
	c, err := redis.Dial("tcp", node.Addr())
	if err != nil {
		t.Fatalf("dial %s: %v", node.Addr(), err)
	}
	psc := redis.PubSubConn{Conn: c}
	if err := psc.PSubscribe("*"); err != nil {
		t.Fatalf("PSUBSCRIBE * = %v", err)
	}
	n := &notices{channels: map[string]int{}, kinds: map[string]int{}}
	subscribed := make(chan struct{})
	done := make(chan struct{})
	go func() { // ends when the connection is closed in Cleanup
		defer close(done)
		for {
			switch m := psc.Receive().(type) {
			case redis.Subscription:
				close(subscribed)
			case redis.Message:
				kind, _, _ := strings.Cut(string(m.Data), ":")
				n.mu.Lock()
				n.channels[m.Channel]++
				n.kinds[kind]++
				n.mu.Unlock()
			case error:
				return
			}
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatalf("PSUBSCRIBE * not confirmed within 5 s")
	}
	return n
}

func (n *notices) counts() (channels map[string]int, kinds map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return maps(n.channels), maps(n.kinds)
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestConfinedACLUser: every technique works, under contention between
// Lockers, for an ACL user confined to its prefix with resetchannels
// (~app:* &app:*); Redis denied it nothing (ACL LOG is empty), every key
// and channel lockzoo used starts with the prefix, and the techniques that
// publish notices did publish.
func TestConfinedACLUser(t *testing.T) {
	const prefix, user, password = "app:", "app", "pw"
	acl := redistest.ACLUser{Name: user, Rules: "on >" + password + " resetchannels ~" + prefix + "* &" + prefix + "* +@all"}
	for _, target := range techniques.All() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			nodes := redistest.Start(t, target.Nodes, redistest.WithACL(acl))
			pools := make([]strategy.Pool, len(nodes))
			heard := make([]*notices, len(nodes))
			for i, n := range nodes {
				pools[i] = n.PoolAs(user, password)
				heard[i] = listen(t, n)
			}
			lockers := newLockers(t, target, pools, strategy.Config{Prefix: prefix, TTL: 10 * time.Second}, contenders)
			locktest.ContentionApart(t, lockers, nodes[0].Pool(), "k", rounds)
			for i, n := range nodes {
				if log, err := redis.Values(n.Do("ACL", "LOG")); err != nil || len(log) != 0 {
					t.Errorf("node %d: ACL LOG has %d entries, %v; want none (nothing denied)", i, len(log), err)
				}
				keys, err := redis.Strings(n.Do("KEYS", "*"))
				if err != nil {
					t.Fatalf("KEYS * = %v", err)
				}
				for _, k := range keys {
					if !strings.HasPrefix(k, prefix) && k != "counter:k" { // the test's own counter
						t.Errorf("node %d: key %q lies outside the prefix %q", i, k, prefix)
					}
				}
				channels, _ := heard[i].counts()
				for ch := range channels {
					if !strings.HasPrefix(ch, prefix) {
						t.Errorf("node %d: channel %q lies outside the prefix %q", i, ch, prefix)
					}
				}
				if len(channels) == 0 {
					t.Errorf("node %d: no notice published under contention, want some", i)
				}
			}
		})
	}
}

// TestCluster: lua_release and redlock on a Redis Cluster of 3 masters,
// each key sent to the master that owns its slot (CLUSTER KEYSLOT and
// CLUSTER SLOTS), keys with and without a {tag} of their own, under
// contention between Lockers so that the lines, hand-offs and notices are
// all used: no script touches keys of two slots (CROSSSLOT), and mutual
// exclusion holds. Redlock runs on the one master that owns the key (its
// independent masters would be separate clusters).
func TestCluster(t *testing.T) {
	cluster := redistest.StartCluster(t)
	heard := listen(t, cluster.Masters()[0]) // PUBLISH reaches every node of a cluster
	names := []string{"orders:1", "orders:2", "users:7", "{user}:a", "{user}:b", "x{tag}y"}
	const prefix = "lock:"
	for _, target := range techniques.All() {
		if target.Name != "lua_release" && target.Name != "redlock" {
			continue
		}
		t.Run(target.Name, func(t *testing.T) {
			var wg sync.WaitGroup
			for _, name := range names {
				rkey := protocol.LockKey(prefix, name)
				k := protocol.KeysOf(rkey)
				for _, other := range []string{k.Fence, k.Line, k.Seen} {
					if a, b := cluster.Slot(rkey), cluster.Slot(other); a != b {
						t.Errorf("slot of %s = %d, of %s = %d; want one slot", rkey, a, other, b)
					}
				}
				owner := []strategy.Pool{cluster.PoolFor(rkey)}
				lockers := newLockers(t, target, owner, strategy.Config{Prefix: prefix, TTL: 10 * time.Second}, contenders)
				wg.Go(func() {
					t.Run(name, func(t *testing.T) {
						locktest.ContentionApart(t, lockers, cluster.PoolFor("counter:"+name), name, rounds)
					})
				})
			}
			wg.Wait()
		})
	}
	channels, kinds := heard.counts()
	t.Logf("notices heard: %v on %d channels", kinds, len(channels))
	// Both techniques' releases hand the lock to a live head of the line
	// (redlock's too, since each node hands its copy on), so a head notice
	// goes out only when the head is not alive or a failed attempt is
	// undone: the hand-offs alone show the lines at work.
	if kinds["handoff"] == 0 {
		t.Errorf("notices by kind = %v; want hand-offs (handoff): the lines were not used", kinds)
	}
	var zadds int
	for _, m := range cluster.Masters() {
		zadds += locktest.CommandCalls(t, m, "zadd")
	}
	if zadds == 0 {
		t.Errorf("ZADD calls on the masters = 0; want some (waiters joining lines)")
	}
}

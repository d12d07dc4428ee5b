package notify_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/notify"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// notices records what a Hub reports.
type notices struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newNotices() *notices { return &notices{ch: make(chan struct{}, 64)} }

func (n *notices) add(channel, data string) {
	n.mu.Lock()
	n.got = append(n.got, channel+"="+data)
	n.mu.Unlock()
	n.ch <- struct{}{}
}

func (n *notices) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		n.mu.Lock()
		for _, g := range n.got {
			if g == want {
				n.mu.Unlock()
				return
			}
		}
		n.mu.Unlock()
		select {
		case <-n.ch:
		case <-deadline:
			t.Fatalf("notice %q never came; got %v", want, n.got)
		}
	}
}

func confirmed(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not confirmed within 5s")
	}
}

func publish(t *testing.T, node *redistest.Node, channel, data string) {
	t.Helper()
	locktest.MustDo(t, node, "PUBLISH", channel, data)
}

// TestHubDeliversAndStops: notices arrive on every node's connection; the
// last Unsubscribe ends the Hub's goroutines (NoLeaks checks).
func TestHubDeliversAndStops(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := redistest.Start(t, 2)
	got := newNotices()
	hub := notify.NewHub([]strategy.Pool{nodes[0].Pool(), nodes[1].Pool()}, got.add)
	confirmed(t, hub.Subscribe("a"))
	confirmed(t, hub.Subscribe("b"))
	hub.Subscribe("a") // a second reference
	// A subscription is confirmed by the first node that answers: wait
	// for the node each notice is published on.
	waitNumSub(t, nodes[0], "a", 1)
	waitNumSub(t, nodes[1], "b", 1)
	publish(t, nodes[0], "a", "1")
	publish(t, nodes[1], "b", "2")
	got.wait(t, "a=1")
	got.wait(t, "b=2")

	hub.Unsubscribe("b")
	hub.Unsubscribe("a") // "a" still has a reference
	publish(t, nodes[1], "a", "3")
	got.wait(t, "a=3")
	hub.Unsubscribe("a")
	hub.Unsubscribe("a") // unknown now: ignored
	waitNumSub(t, nodes[0], "a", 0)
}

// TestHubReconnects: when the server drops the subscription connection the
// Hub pokes every channel (a notice may have been lost), reconnects and
// subscribes again.
func TestHubReconnects(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	got := newNotices()
	hub := notify.NewHub([]strategy.Pool{node.Pool()}, got.add)
	t.Cleanup(hub.Close)
	confirmed(t, hub.Subscribe("k"))
	locktest.MustDo(t, node, "CLIENT", "KILL", "TYPE", "pubsub")
	got.wait(t, "k=") // the poke after the connection failed
	waitNumSub(t, node, "k", 1)
	publish(t, node, "k", "after")
	got.wait(t, "k=after")
}

func waitNumSub(t *testing.T, node *redistest.Node, channel string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		reply, err := redis.Values(node.Do("PUBSUB", "NUMSUB", channel))
		if err == nil && len(reply) == 2 {
			if n, _ := redis.Int(reply[1], nil); n == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUBSUB NUMSUB %s never reached %d (last %v, %v)", channel, want, reply, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHubLingers: a channel whose last reference was dropped stays
// subscribed for Linger: a new reference within it is confirmed at once,
// without another SUBSCRIBE, and notices still arrive; Linger after the
// last reference it is unsubscribed and the Hub's goroutines end.
func TestHubLingers(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	got := newNotices()
	hub := notify.NewHub([]strategy.Pool{node.Pool()}, got.add)
	confirmed(t, hub.Subscribe("k"))
	hub.Unsubscribe("k")
	locktest.MustDo(t, node, "CONFIG", "RESETSTAT")
	select {
	case <-hub.Subscribe("k"):
	default:
		t.Fatalf("Subscribe() within Linger: not confirmed at once, want the lingering subscription")
	}
	publish(t, node, "k", "again")
	got.wait(t, "k=again")
	if n := subscribeCalls(t, node); n != 0 {
		t.Errorf("SUBSCRIBE calls for a lingering channel = %d, want 0", n)
	}
	released := time.Now()
	hub.Unsubscribe("k")
	waitNumSub(t, node, "k", 0)
	if d := time.Since(released); d < notify.Linger {
		t.Errorf("unsubscribed %v after the last Unsubscribe, want at least Linger (%v)", d, notify.Linger)
	}
}

// subscribeCalls returns how many SUBSCRIBE commands node ran since its
// statistics were reset.
func subscribeCalls(t *testing.T, node *redistest.Node) int {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "commandstats"))
	if err != nil {
		t.Fatalf("INFO commandstats = %v, want a reply", err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_subscribe:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatalf("INFO commandstats line %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// TestHubClose: Close ends the subscriptions and the Hub's goroutines at
// once, lingering or not, on every node; later Subscribe and Unsubscribe
// calls do nothing, and a second Close returns.
func TestHubClose(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := redistest.Start(t, 2)
	running := goleak.IgnoreCurrent() // the harness's own goroutines
	got := newNotices()
	hub := notify.NewHub([]strategy.Pool{nodes[0].Pool(), nodes[1].Pool()}, got.add)
	confirmed(t, hub.Subscribe("held"))
	confirmed(t, hub.Subscribe("lingering"))
	hub.Unsubscribe("lingering")

	hub.Close()
	if err := goleak.Find(running); err != nil {
		t.Errorf("goroutines left right after Close: %v", err)
	}
	for _, n := range nodes {
		waitNumSub(t, n, "held", 0)
		waitNumSub(t, n, "lingering", 0)
	}
	if c := hub.Subscribe("new"); c != nil {
		t.Errorf("Subscribe() after Close = %v, want nil (never confirmed)", c)
	}
	hub.Unsubscribe("held")
	hub.Close()
	if err := goleak.Find(running); err != nil {
		t.Errorf("goroutines left after Subscribe and a second Close: %v", err)
	}
	for _, n := range nodes {
		waitNumSub(t, n, "new", 0)
	}
}

// TestHubListening: Listening is false for a channel never subscribed,
// true once its subscription is confirmed, and false again after Close.
func TestHubListening(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	hub := notify.NewHub([]strategy.Pool{node.Pool()}, newNotices().add)
	defer hub.Close()
	if hub.Listening("a") {
		t.Errorf("Listening(a) before Subscribe = true, want false")
	}
	confirmed(t, hub.Subscribe("a"))
	if !hub.Listening("a") {
		t.Errorf("Listening(a) after the confirmation = false, want true")
	}
	if hub.Listening("b") {
		t.Errorf("Listening(b), never subscribed = true, want false")
	}
	hub.Close()
	if hub.Listening("a") {
		t.Errorf("Listening(a) after Close = true, want false")
	}
}

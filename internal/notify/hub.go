// Package notify carries lock-release notices over Redis pub/sub, so that a
// waiter wakes when the lock it wants is released instead of polling.
//
//	import "github.com/lockzoo/lockzoo/internal/notify"
//
// A Hub keeps one subscription connection per Redis node and multiplexes
// every channel its users subscribe to over it. Subscribe counts references
// per channel; the first reference sends SUBSCRIBE and the last one sends
// UNSUBSCRIBE. When a connection fails the Hub reconnects with backoff and
// subscribes again, and meanwhile tells every channel's listener to look
// for itself (a notice may have been lost). Listeners must never depend on
// a notice alone: it is a hint that shortens a wait, and a timer must bound
// every wait.
//
// A channel whose last reference is dropped stays subscribed for Linger,
// so that a caller that waits for the same key again soon (a worker that
// locks a key over and over) finds its subscription ready instead of
// paying a SUBSCRIBE, and a connection, each time. Each node's connection
// is served by one goroutine, started with the first subscription and
// ended once no channel is subscribed, at most Linger after the last
// Unsubscribe, or at once by Close.
package notify

import (
	"context"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// Reconnect backoff bounds.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// Linger is how long a channel stays subscribed after its last reference
// was dropped.
const Linger = time.Second

// Hub subscribes to channels on one or more Redis nodes and reports every
// message to onNotice. It is safe for concurrent use.
type Hub struct {
	pools    []strategy.Pool
	onNotice func(node int, channel, data string)

	mu       sync.Mutex
	channels map[string]*channel
	sessions []*session // one per pool while any channel is subscribed
	closed   bool
}

type channel struct {
	refs      int
	confirmed chan struct{} // closed on the first SUBSCRIBE confirmation
	isConfirm bool
	idle      *time.Timer // while refs is 0: ends the subscription after Linger
}

// NewHub returns a Hub over pools that calls onNotice(channel, data) for
// each message received, from the Hub's goroutines, never while holding the
// Hub's lock.
func NewHub(pools []strategy.Pool, onNotice func(channel, data string)) *Hub {
	return NewNodeHub(pools, func(_ int, channel, data string) { onNotice(channel, data) })
}

// NewNodeHub is NewHub for a caller that needs to know which node a
// message came from: onNotice gets the index in pools of the node whose
// subscription received it, or -1 for the empty message that tells every
// listener to look for itself (see NewHub).
func NewNodeHub(pools []strategy.Pool, onNotice func(node int, channel, data string)) *Hub {
	return &Hub{pools: pools, onNotice: onNotice, channels: map[string]*channel{}}
}

// Subscribe adds a reference to name and returns a channel that is closed
// once a node has confirmed the subscription (at once when it still
// lingers from an earlier reference). It never blocks on Redis: callers
// wait on the returned channel with a bound of their own. After Close it
// subscribes to nothing and returns nil, a channel that is never closed.
func (h *Hub) Subscribe(name string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	c, ok := h.channels[name]
	if !ok {
		c = &channel{confirmed: make(chan struct{})}
		h.channels[name] = c
	}
	c.refs++
	if c.idle != nil {
		c.idle.Stop() // an expiry that already fired finds refs > 0
		c.idle = nil
	}
	if ok {
		return c.confirmed
	}
	if h.sessions == nil {
		h.start()
		return c.confirmed // each session subscribes to every channel on connect
	}
	for _, s := range h.sessions {
		s.subscribe(name)
	}
	return c.confirmed
}

// Listening reports whether name is subscribed and confirmed (a node
// confirmed it at least once) and a node's connection is up, so that a
// message published on name now reaches onNotice unless that connection
// fails. It is false after Close.
func (h *Hub) Listening(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.channels[name]
	if h.closed || !ok || !c.isConfirm {
		return false
	}
	for _, s := range h.sessions {
		if s.conn != nil {
			return true
		}
	}
	return false
}

// Unsubscribe drops a reference to name; after the last one, name stays
// subscribed for Linger, then is unsubscribed, and when no channel is left
// the Hub closes its connections and its goroutines end. After Close it
// does nothing.
func (h *Hub) Unsubscribe(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.channels[name]
	if h.closed || !ok || c.refs == 0 {
		return
	}
	if c.refs--; c.refs > 0 {
		return
	}
	c.idle = time.AfterFunc(Linger, func() { h.expire(name, c) })
}

// expire ends the subscription to name if nobody took a reference to it
// again since its last Unsubscribe.
func (h *Hub) expire(name string, c *channel) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.channels[name] != c || c.refs > 0 {
		return
	}
	delete(h.channels, name)
	if len(h.channels) == 0 {
		for _, s := range h.sessions {
			s.cancel() // its goroutine ends on its own, soon
		}
		h.sessions = nil
		return
	}
	for _, s := range h.sessions {
		s.unsubscribe(name)
	}
}

// Close ends every subscription at once: it closes the Hub's connections
// and returns once their goroutines have ended, so onNotice is not called
// after it returns. Later Subscribe and Unsubscribe calls do nothing; a
// second Close returns at once. Close must not be called from onNotice.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for _, c := range h.channels {
		if c.idle != nil {
			c.idle.Stop() // an expiry that already fired finds the Hub closed
		}
	}
	h.channels = map[string]*channel{}
	sessions := h.sessions
	h.sessions = nil
	for _, s := range sessions {
		s.cancel()
	}
	h.mu.Unlock()
	for _, s := range sessions {
		<-s.done
	}
}

// start launches one session per pool. h.mu is held.
func (h *Hub) start() {
	for i, p := range h.pools {
		ctx, cancel := context.WithCancel(context.Background())
		s := &session{hub: h, pool: p, node: i, cancel: cancel, done: make(chan struct{})}
		s.sharded, _ = p.(redisconn.Sharded)
		h.sessions = append(h.sessions, s)
		go s.run(ctx)
	}
}

// confirm marks name as subscribed on at least one node.
func (h *Hub) confirm(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.channels[name]; ok && !c.isConfirm {
		c.isConfirm = true
		close(c.confirmed)
	}
}

// names returns the subscribed channels. h.mu is held.
func (h *Hub) names() []any {
	names := make([]any, 0, len(h.channels))
	for name := range h.channels {
		names = append(names, name)
	}
	return names
}

// pokeAll tells every channel's listener to look for itself (a notice with
// empty data).
func (h *Hub) pokeAll() {
	h.mu.Lock()
	names := h.names()
	h.mu.Unlock()
	for _, name := range names {
		h.onNotice(-1, name.(string), "")
	}
}

// referenced reports whether name is subscribed by a caller.
func (h *Hub) referenced(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.channels[name]
	return ok && c.refs > 0
}

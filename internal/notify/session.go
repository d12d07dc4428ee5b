package notify

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// session is one node's subscription connection and the goroutine that
// reads it. The goroutine ends when cancel is called, and then closes done.
type session struct {
	hub    *Hub
	pool   strategy.Pool
	node   int // the pool's index in the Hub's pools
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns
	conn   redis.Conn    // guarded by hub.mu; nil while not connected
	// sharded is the pool when it is a Redis Cluster's: shard channels.
	sharded redisconn.Sharded
}

// subscribe sends SUBSCRIBE, or SSUBSCRIBE on a cluster, of names.
// hub.mu is held.
func (s *session) subscribe(names ...any) {
	if s.sharded != nil {
		s.send("SSUBSCRIBE", names...)
		return
	}
	s.send("SUBSCRIBE", names...)
}

// unsubscribe sends UNSUBSCRIBE, or SUNSUBSCRIBE on a cluster, of name.
// hub.mu is held.
func (s *session) unsubscribe(name string) {
	if s.sharded != nil {
		s.send("SUNSUBSCRIBE", name)
		return
	}
	s.send("UNSUBSCRIBE", name)
}

// send writes a command on the connection, if there is one. hub.mu is held,
// which serialises writers; the reader runs concurrently, as redigo allows.
// A failed write is left for the reader to discover.
func (s *session) send(cmd string, args ...any) {
	if s.conn == nil {
		return
	}
	defer func() { _ = recover() }() // a panicking connection fails like a failed write
	if s.conn.Send(cmd, args...) == nil {
		_ = s.conn.Flush()
	}
}

// run connects, subscribes to every channel and reads notices until ctx is
// cancelled, reconnecting with backoff after a failure.
func (s *session) run(ctx context.Context) {
	defer close(s.done)
	backoff := minBackoff
	for {
		if s.serve(ctx) {
			backoff = minBackoff
		}
		if ctx.Err() != nil {
			return
		}
		s.hub.pokeAll() // a notice may have been lost while disconnected
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// serve runs one connection until it fails or ctx ends; it reports whether
// the connection got as far as a confirmed subscription.
//
// A pool that returns no connection, or a pool or connection that panics
// (a Pool of the user's), fails the connection like a network error: the
// panic is recovered, since nothing may crash the process from this
// goroutine.
func (s *session) serve(ctx context.Context) (healthy bool) {
	defer func() {
		if recover() != nil {
			healthy = false
		}
	}()
	conn, err := s.connect(ctx)
	if err != nil || conn == nil {
		return false
	}
	s.hub.mu.Lock()
	if ctx.Err() != nil {
		s.hub.mu.Unlock()
		conn.Close()
		return false
	}
	s.conn = conn
	if names := s.hub.names(); len(names) > 0 {
		s.subscribe(names...)
	}
	s.hub.mu.Unlock()
	defer func() {
		s.hub.mu.Lock()
		s.conn = nil
		s.hub.mu.Unlock()
		conn.Close()
	}()
	if s.sharded != nil {
		return s.serveShards(ctx, conn)
	}
	psc := redis.PubSubConn{Conn: conn}
	for {
		switch v := psc.ReceiveContext(ctx).(type) {
		case redis.Message:
			s.hub.onNotice(s.node, v.Channel, string(v.Data))
		case redis.Subscription:
			if v.Kind == "subscribe" {
				healthy = true
				s.hub.confirm(v.Channel)
			}
		case error:
			return healthy
		}
	}
}

// connect returns a connection for subscriptions: the pool's, or its
// Subscriber on a cluster.
func (s *session) connect(ctx context.Context) (redis.Conn, error) {
	if s.sharded != nil {
		return s.sharded.Subscriber(ctx)
	}
	return s.pool.GetContext(ctx)
}

// serveShards is serve's loop for shard channels, whose messages
// (smessage) and confirmations (ssubscribe, sunsubscribe) redigo's
// PubSubConn does not read. A sunsubscribe of a channel still referenced
// came from the server, whose slot moved: the subscriber subscribes it
// again on the new master, and its listeners look for themselves, since
// a notice may have been lost meanwhile.
func (s *session) serveShards(ctx context.Context, conn redis.Conn) (healthy bool) {
	for {
		v, err := redis.ReceiveContext(conn, ctx)
		if err != nil {
			return healthy
		}
		vals, _ := v.([]any)
		if len(vals) < 3 {
			continue
		}
		kind, _ := redis.String(vals[0], nil)
		ch, _ := redis.String(vals[1], nil)
		switch kind {
		case "smessage", "message":
			data, _ := redis.String(vals[2], nil)
			s.hub.onNotice(s.node, ch, data)
		case "ssubscribe", "subscribe":
			healthy = true
			s.hub.confirm(ch)
		case "sunsubscribe":
			if s.hub.referenced(ch) {
				s.hub.onNotice(-1, ch, "")
			}
		}
	}
}

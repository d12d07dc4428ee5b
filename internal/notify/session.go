package notify

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"

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
	conn, err := s.pool.GetContext(ctx)
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
		s.send("SUBSCRIBE", names...)
	}
	s.hub.mu.Unlock()
	defer func() {
		s.hub.mu.Lock()
		s.conn = nil
		s.hub.mu.Unlock()
		conn.Close()
	}()
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

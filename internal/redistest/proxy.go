package redistest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// proxyDialTimeout bounds the proxy's dial of its target for each client
// connection.
const proxyDialTimeout = time.Second

// Proxy is a TCP proxy on a loopback port in front of one Redis server, for
// network-fault tests: it forwards bytes both ways and, when told, delays
// them, drops Redis's replies (all of them, whole ones while a fault lasts,
// or exactly the next n) or drops everything. Create it with NewProxy;
// it stops when the test ends.
//
// Faults apply to bytes as the proxy reads them, on every connection, open
// or new: bytes read before a switch keep the fate they were given (a chunk
// delayed by 1 s still arrives 1 s after it was read, even after Heal). A
// fault that drops bytes leaves the connection out of step with the
// protocol, so a client must close such a connection rather than reuse it;
// redigo does so after any read timeout.
//
// Addr, Pool, the fault methods, Mode, Accepted and Swallowed may be called from any
// goroutine, also while connections carry traffic (from a time.AfterFunc
// that heals the network, say).
type Proxy struct {
	t      TB
	target string
	ln     net.Listener
	// lease holds the listener's port until close.
	lease *portLease
	pool  *redis.Pool
	fault atomic.Pointer[proxyFault]
	// dropNext is how many more replies DropNextReplies discards.
	dropNext atomic.Int64
	// dropTo is the command name DropReplyTo waits for, nil when disarmed.
	dropTo atomic.Pointer[string]
	// accepted counts the client connections accepted so far.
	accepted atomic.Int64
	// swallowed counts the whole replies SwallowReplies and
	// DropNextReplies discarded.
	swallowed atomic.Int64

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	// wg counts the accept loop and the pumps of every connection.
	wg sync.WaitGroup
}

// NewProxy starts a proxy on a leased 127.0.0.1 port (as the harness's
// servers use) that forwards every connection to target ("host:port",
// typically a Node's Addr), in pass-through mode. When the test ends
// (t.Cleanup) it closes its pool, its listener and every connection, waits
// until all its goroutines have ended and releases its port. When it
// cannot listen it calls t.Fatalf.
func NewProxy(t TB, target string) *Proxy {
	t.Helper()
	ln, lease, err := listenLeased()
	if err != nil {
		t.Fatalf("redistest: NewProxy to %s: %v", target, err)
	}
	p := &Proxy{t: t, target: target, ln: ln, lease: lease, conns: map[net.Conn]struct{}{}}
	p.fault.Store(passThrough())
	p.pool = newPool(p.Addr(), func() time.Time { return time.Time{} })
	p.wg.Go(p.acceptLoop)
	t.Cleanup(p.close)
	return p
}

// Addr returns the proxy's "127.0.0.1:port" address.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Pool returns a pool whose connections go through the proxy, with the same
// settings as Node.Pool, the same one on every call; it is closed when the
// test ends.
func (p *Proxy) Pool() *redis.Pool { return p.pool }

// Accepted returns how many client connections the proxy has accepted.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Swallowed returns how many whole replies SwallowReplies and
// DropNextReplies have discarded so far (not what DropReplies or BlackHole
// dropped, which need not be whole replies).
func (p *Proxy) Swallowed() int64 { return p.swallowed.Load() }

// acceptLoop accepts client connections until the listener is closed.
func (p *Proxy) acceptLoop() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed by close; any other accept error ends the proxy too
		}
		p.accepted.Add(1)
		p.wg.Go(func() { p.serve(client) })
	}
}

// serve connects client to the target and runs its four pumps; it returns
// once all of them have ended, which happens when either side closes or
// errs, or close closes both.
func (p *Proxy) serve(client net.Conn) {
	if !p.track(client) {
		client.Close()
		return
	}
	defer p.untrack(client)
	server, err := net.DialTimeout("tcp", p.target, proxyDialTimeout)
	if err != nil {
		// The client sees its connection closed, as with a dead server.
		client.Close()
		return
	}
	if !p.track(server) {
		server.Close()
		client.Close()
		return
	}
	defer p.untrack(server)

	var once sync.Once
	done := make(chan struct{})
	stop := func() {
		once.Do(func() {
			close(done)
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	var order commandOrder
	wg.Go(func() { p.pipe(client, server, false, &order, done, stop) })
	wg.Go(func() { p.pipe(server, client, true, &order, done, stop) })
	wg.Wait()
}

// chunk is one read's bytes and when they may be written on.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst through a queue, applying the fault current at
// each read; replies tells the direction (server to client). It stops both
// connections (stop) when either end fails, and returns when its reader
// and writer have both ended. order carries each command's fate from the
// request pipe to the reply pipe (DropReplyTo).
func (p *Proxy) pipe(src, dst net.Conn, replies bool, order *commandOrder, done <-chan struct{}, stop func()) {
	queue := make(chan chunk, 64)
	var wg sync.WaitGroup
	wg.Go(func() { // writer: ends when the queue is closed or done
		defer stop()
		for {
			var c chunk
			var ok bool
			select {
			case c, ok = <-queue:
				if !ok {
					return
				}
			case <-done:
				return
			}
			if wait := time.Until(c.due); wait > 0 {
				timer := time.NewTimer(wait)
				select {
				case <-timer.C:
				case <-done:
					timer.Stop()
					return
				}
			}
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	})
	defer wg.Wait()
	defer close(queue)
	defer stop()
	buf := make([]byte, 32<<10)
	var scan replyScanner       // follows the replies; used when replies is set
	var requests requestScanner // follows the commands; used when it is not
	for {
		n, err := src.Read(buf)
		if n > 0 {
			f := p.fault.Load()
			b := buf[:n]
			if replies {
				// Always scanned, so that a later DropNextReplies
				// starts at a reply's first byte.
				b = scan.filter(b, func() bool {
					// Replies dropped anyway do not spend the count.
					dropTo := order.pop()
					drop := f.swallowReplies || dropTo || !f.dropReplies && p.claimDrop()
					if drop {
						p.swallowed.Add(1)
					}
					return drop
				})
			} else {
				b = append([]byte(nil), b...)
				requests.scan(b, func(name string) {
					if !f.dropRequests { // a command dropped gets no reply
						order.push(p.claimDropTo(name))
					}
				})
			}
			drop := f.dropReplies && replies || f.dropRequests && !replies
			if !drop && len(b) > 0 {
				select {
				case queue <- chunk{b: b, due: time.Now().Add(f.delay)}:
				case <-done:
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// track records an open connection so that close and Reset can close it;
// it reports false once the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// close stops the proxy: it closes the pool, the listener and every
// connection, then waits for the accept loop and every pump to end.
func (p *Proxy) close() {
	if err := p.pool.Close(); err != nil {
		p.t.Errorf("redistest: close pool of proxy %s: %v", p.Addr(), err)
	}
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	if err := p.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		p.t.Errorf("redistest: close proxy %s: %v", p.Addr(), err)
	}
	p.wg.Wait()
	if err := p.lease.release(); err != nil {
		p.t.Errorf("redistest: proxy %s: %v", p.Addr(), err)
	}
}

// String describes the proxy for log lines.
func (p *Proxy) String() string {
	return fmt.Sprintf("proxy %s -> %s (%s)", p.Addr(), p.target, p.Mode())
}

package redistest

import (
	"fmt"
	"time"
)

// proxyFault is what the proxy does with the bytes it reads.
type proxyFault struct {
	name string
	// delay is added to every chunk before it is written on.
	delay time.Duration
	// dropRequests and dropReplies discard what the client sends and what
	// the server sends.
	dropRequests, dropReplies bool
	// swallowReplies discards every reply that starts while the fault is
	// on, whole, keeping the stream in step with the protocol.
	swallowReplies bool
}

// passThrough returns the fault that forwards everything at once.
func passThrough() *proxyFault { return &proxyFault{name: "pass"} }

// Mode returns the current fault's name: "pass", "delay 100ms",
// "drop-replies", "swallow-replies" or "black-hole", followed by ", drop next N replies" while
// DropNextReplies has replies left to discard.
func (p *Proxy) Mode() string {
	name := p.fault.Load().name
	if n := p.dropNext.Load(); n > 0 {
		name += fmt.Sprintf(", drop next %d replies", n)
	}
	return name
}

// Heal returns the proxy to pass-through: bytes read from now on are
// forwarded at once, and DropNextReplies's count is cleared.
func (p *Proxy) Heal() {
	p.fault.Store(passThrough())
	p.dropNext.Store(0)
	p.dropTo.Store(nil)
}

// DropNextReplies makes the proxy discard, whole, the next n replies the
// server sends, on whichever connections they come, and forward everything
// else: the commands take effect on Redis, and their clients wait for
// replies that never come. It adds to the replies still to be discarded;
// n <= 0 does nothing. The proxy tells replies apart by parsing RESP, so on
// a connection in pub/sub mode each message counts as a reply.
func (p *Proxy) DropNextReplies(n int) {
	if n > 0 {
		p.dropNext.Add(int64(n))
	}
}

// claimDrop reports whether a reply that starts now is to be discarded by
// DropNextReplies, and if so counts it.
func (p *Proxy) claimDrop() bool {
	for {
		n := p.dropNext.Load()
		if n <= 0 {
			return false
		}
		if p.dropNext.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// Delay makes the proxy hold every chunk it reads, in either direction, for
// d before writing it on, so a command's round trip takes at least 2d.
// Order is kept. Delay(0) is Heal.
func (p *Proxy) Delay(d time.Duration) {
	if d <= 0 {
		p.Heal()
		return
	}
	p.fault.Store(&proxyFault{name: "delay " + d.String(), delay: d})
}

// DropReplies makes the proxy forward what clients send but discard what
// the server sends back: a command reaches Redis and takes effect, and its
// reply is lost, so the client waits until its own deadline. Connections
// stay open.
func (p *Proxy) DropReplies() {
	p.fault.Store(&proxyFault{name: "drop-replies", dropReplies: true})
}

// SwallowReplies makes the proxy forward what clients send and discard,
// whole, every reply the server starts to send while the fault lasts, on
// every connection: commands take effect, their clients wait for replies
// that never come, and the connections stay open and in step with the
// protocol, so the first reply after Heal reads as a well-formed reply to
// whatever its client waits for. That is the fault behind a reply handed to
// the wrong caller: unlike DropReplies, which drops whatever bytes it reads
// and can leave half a reply, it never breaks the stream's framing, so a
// client notices only by matching replies to its requests.
func (p *Proxy) SwallowReplies() {
	p.fault.Store(&proxyFault{name: "swallow-replies", swallowReplies: true})
}

// BlackHole makes the proxy discard everything it reads in both directions,
// as a network partition that loses packets would: commands never reach
// Redis, nothing comes back, and connections, open or new, stay open.
func (p *Proxy) BlackHole() {
	p.fault.Store(&proxyFault{name: "black-hole", dropRequests: true, dropReplies: true})
}

// Reset closes every connection open through the proxy now, as a network
// that resets them would; the proxy keeps accepting new ones.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

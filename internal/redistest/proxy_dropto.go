package redistest

import (
	"bytes"
	"strings"
	"sync"
)

// DropReplyTo makes the proxy discard, whole, the reply to the next
// command named name (case-insensitive, "EVALSHA" say) that a client sends
// from now on, on whichever connection it comes, and forward everything
// else: the command takes effect on Redis, and its client waits for a
// reply that never comes. Unlike DropNextReplies it cannot hit a reply
// already on its way to another command, such as one a concurrent caller
// sent just before. A later call replaces an armed name that no command
// met yet; Heal disarms it. Replies are matched to commands by order, so
// use it on connections that are not in pub/sub mode.
func (p *Proxy) DropReplyTo(name string) {
	name = strings.ToUpper(name)
	p.dropTo.Store(&name)
}

// claimDropTo reports whether a command named name, just sent, is the one
// DropReplyTo is waiting for, and if so disarms it.
func (p *Proxy) claimDropTo(name string) bool {
	armed := p.dropTo.Load()
	return armed != nil && *armed == strings.ToUpper(name) && p.dropTo.CompareAndSwap(armed, nil)
}

// commandOrder is one proxied connection's commands whose replies have
// not started yet, in order, each with whether its reply is to be
// discarded (DropReplyTo). The request pump pushes, the reply pump pops.
type commandOrder struct {
	mu   sync.Mutex
	drop []bool
}

func (o *commandOrder) push(drop bool) {
	o.mu.Lock()
	o.drop = append(o.drop, drop)
	o.mu.Unlock()
}

// pop returns the fate of the next reply: false when no command awaits one
// (a pub/sub message, say).
func (o *commandOrder) pop() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.drop) == 0 {
		return false
	}
	drop := o.drop[0]
	o.drop = o.drop[1:]
	return drop
}

// requestScanner follows the commands in a stream of bytes a client sends
// (RESP arrays of bulk strings, or inline commands) and reports each
// command's name once the command is complete.
type requestScanner struct {
	s replyScanner // the framing is RESP's, as for replies
	// head keeps the first maxCommandHead bytes of the command being read.
	head []byte
}

// maxCommandHead bounds what requestScanner keeps of a command: enough for
// "*<n>\r\n$<len>\r\n" and a command name.
const maxCommandHead = 64

// scan consumes b and calls done with the name of each command completed.
func (r *requestScanner) scan(b []byte, done func(name string)) {
	for i := 0; i < len(b); {
		r.s.inReply = true
		n := r.s.step(b[i:])
		if keep := maxCommandHead - len(r.head); keep > 0 {
			r.head = append(r.head, b[i:i+min(n, keep)]...)
		}
		i += n
		if !r.s.inReply {
			done(commandName(r.head))
			r.head = r.head[:0]
		}
	}
}

// commandName returns the name in a command's first bytes: the first bulk
// string of a RESP array, or the first word of an inline command.
func commandName(head []byte) string {
	if len(head) > 0 && head[0] == '*' {
		lines := bytes.SplitN(head, []byte("\r\n"), 4)
		if len(lines) >= 3 {
			return string(lines[2])
		}
		return ""
	}
	name, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte(" "))
	return string(name)
}

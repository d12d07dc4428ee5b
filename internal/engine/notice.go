package engine

import "github.com/lockzoo/lockzoo/internal/protocol"

// onNotice routes a release notice for key to the key's line: a hand-off
// to the waiter it names, else "try now" to the head. The bodies are
// protocol.Notice's.
func (q *lines) onNotice(key, body string) {
	n := protocol.ParseNotice(body)
	if n.HandOff {
		q.handOffByName(key, n.Waiter, n.Fence)
		return
	}
	q.poke(key, n.Waiter)
}

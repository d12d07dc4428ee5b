package engine

import "github.com/lockzoo/lockzoo/internal/protocol"

// onNotice routes a release notice for key to the key's line.
func (q *lines) onNotice(key, body string) {
	n := protocol.ParseNotice(body)
	if n.HandOff {
		q.grant(key, n.Waiter, n.Fence)
		return
	}
	q.poke(key, n.Waiter)
}

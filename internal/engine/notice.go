package engine

import "github.com/lockzoo/lockzoo/internal/protocol"

// onNotice routes a release notice for key to the key's line: a hand-off
// to the waiter it names, else "try now" to the head. The bodies are
// protocol.Notice's. It reports a hand-off that found no waiter by that
// name in the line (lost), with the name and the fencing token: the lock
// now holds the name of a waiter that is gone.
func (q *lines) onNotice(key, body string) (name string, fence uint64, lost bool) {
	n := protocol.ParseNotice(body)
	if n.HandOff {
		if !q.handOffByName(key, n.Waiter, n.Fence) {
			return n.Waiter, n.Fence, true
		}
		return "", 0, false
	}
	q.poke(key, n.Waiter)
	return "", 0, false
}

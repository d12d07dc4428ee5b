package engine

import (
	"strconv"
	"strings"
)

// Release notices. A technique that publishes them (see WithNotices) sends
// one of these bodies on Held.Channel in the same step as the release:
//
//	""                            anyone waiting may try now
//	"head:" + waiter              the waiter at the head of the line may try now
//	"grant:" + fence + ":" + waiter
//	                              the release handed the lock off to waiter:
//	                              the key now holds waiter (its Lock call's
//	                              name) as the owner token, with fencing
//	                              token fence
//
// Every body but "" starts with its kind, so a waiter name can never be
// mistaken for another kind of notice.
const (
	noticeHead  = "head:"
	noticeGrant = "grant:"
)

// notice is a parsed release notice.
type notice struct {
	target string // the waiter it names; "" for anyone
	grant  bool   // a "grant:" notice: the lock was handed off to target
	fence  uint64 // the fencing token of a hand-off
}

// parseNotice reads a notice body. A body it does not know reads as
// "anyone may try now": a notice is only ever a hint to try, except for a
// well-formed "grant:" notice. It is the one place that reads the bodies.
func parseNotice(body string) notice {
	switch {
	case strings.HasPrefix(body, noticeHead):
		return notice{target: body[len(noticeHead):]}
	case strings.HasPrefix(body, noticeGrant):
		rest := body[len(noticeGrant):]
		f, waiter, ok := strings.Cut(rest, ":")
		if !ok || waiter == "" {
			return notice{}
		}
		fence, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return notice{}
		}
		return notice{target: waiter, grant: true, fence: fence}
	}
	return notice{}
}

// onNotice routes a release notice for key to the key's line: a hand-off
// to the waiter it names, else "try now" to the head.
func (q *lines) onNotice(key, body string) {
	n := parseNotice(body)
	if n.grant {
		q.handOffByName(key, n.target, n.fence)
		return
	}
	q.poke(key, n.target)
}

package protocol

import (
	"strconv"
	"strings"
)

// Release notices. A release publishes one of these bodies in the same
// step as the release (package line's line.lua builds them):
//
//	""                               anyone waiting may try now
//	"head:" + waiter                 the waiter at the head of the line may try now
//	"handoff:" + fence + ":" + waiter  the release handed the lock to waiter: the key
//	                                 now holds waiter (its Lock call's name) as the
//	                                 owner token, with fencing token fence
//
// Every body but "" starts with its kind, so a waiter name can never be
// mistaken for another kind of notice.
const (
	noticeHead    = "head:"
	noticeHandOff = "handoff:"
)

// Notice is a parsed release notice.
type Notice struct {
	Waiter  string // the waiter it names; "" for anyone
	HandOff bool   // the lock was handed to Waiter
	Fence   uint64 // the fencing token of a hand-off
}

// String encodes n as a notice body.
func (n Notice) String() string {
	switch {
	case n.HandOff:
		return noticeHandOff + strconv.FormatUint(n.Fence, 10) + ":" + n.Waiter
	case n.Waiter != "":
		return noticeHead + n.Waiter
	}
	return ""
}

// ParseNotice reads a notice body. A body it does not know reads as
// "anyone may try now": a notice is only ever a hint to try, except for a
// well-formed hand-off.
func ParseNotice(body string) Notice {
	switch {
	case strings.HasPrefix(body, noticeHead):
		return Notice{Waiter: body[len(noticeHead):]}
	case strings.HasPrefix(body, noticeHandOff):
		f, waiter, ok := strings.Cut(body[len(noticeHandOff):], ":")
		if !ok || waiter == "" {
			return Notice{}
		}
		fence, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return Notice{}
		}
		return Notice{Waiter: waiter, HandOff: true, Fence: fence}
	}
	return Notice{}
}

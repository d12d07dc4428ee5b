package protocol_test

import (
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

func TestMemberRoundTrip(t *testing.T) {
	tests := []protocol.Member{
		{TTL: 10 * time.Second, Locker: "L", Waiter: "w"},
		{TTL: time.Millisecond, Locker: "", Waiter: "w/with/slashes"},
	}
	for _, m := range tests {
		t.Run(m.String(), func(t *testing.T) {
			got, err := protocol.ParseMember(m.String())
			if err != nil || got != m {
				t.Errorf("ParseMember(%q) = %+v, %v; want %+v", m.String(), got, err, m)
			}
		})
	}
}

func TestParseMemberRejects(t *testing.T) {
	for _, s := range []string{"", "x/L/w", "10/L", "10/L/", "-1/L/w"} {
		if m, err := protocol.ParseMember(s); err == nil {
			t.Errorf("ParseMember(%q) = %+v, nil; want an error", s, m)
		}
	}
}

func TestNoticeRoundTrip(t *testing.T) {
	tests := []protocol.Notice{
		{},
		{Waiter: "w"},
		{Waiter: "w:with:colons", HandOff: true, Fence: 1 << 52},
	}
	for _, n := range tests {
		t.Run(n.String(), func(t *testing.T) {
			if got := protocol.ParseNotice(n.String()); got != n {
				t.Errorf("ParseNotice(%q) = %+v, want %+v", n.String(), got, n)
			}
		})
	}
}

func TestParseNotice(t *testing.T) {
	tests := []struct {
		name string
		body string
		want protocol.Notice
	}{
		{name: "empty is for anyone", body: "", want: protocol.Notice{}},
		{name: "head names its waiter", body: "head:w", want: protocol.Notice{Waiter: "w"}},
		{name: "head without a name is for anyone", body: "head:", want: protocol.Notice{}},
		{name: "handoff", body: "handoff:7:w", want: protocol.Notice{Waiter: "w", HandOff: true, Fence: 7}},
		{name: "hand-off to a waiter with a colon", body: "handoff:7:a:b", want: protocol.Notice{Waiter: "a:b", HandOff: true, Fence: 7}},
		{name: "hand-off with a zero fence", body: "handoff:0:w", want: protocol.Notice{Waiter: "w", HandOff: true, Fence: 0}},
		{name: "hand-off with a fence that is no number", body: "handoff:x:w", want: protocol.Notice{}},
		{name: "hand-off without a waiter", body: "handoff:7:", want: protocol.Notice{}},
		{name: "hand-off without a fence", body: "handoff::w", want: protocol.Notice{}},
		{name: "hand-off with a negative fence", body: "handoff:-1:w", want: protocol.Notice{}},
		{name: "hand-off without a separator", body: "handoff:7", want: protocol.Notice{}},
		{name: "hand-off with an overflowing fence", body: "handoff:18446744073709551616:w", want: protocol.Notice{}},
		{name: "unknown kind is for anyone", body: "unknown", want: protocol.Notice{}},
		{name: "kind is case-sensitive", body: "HANDOFF:7:w", want: protocol.Notice{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := protocol.ParseNotice(tt.body); got != tt.want {
				t.Errorf("ParseNotice(%q) = %+v, want %+v", tt.body, got, tt.want)
			}
		})
	}
}

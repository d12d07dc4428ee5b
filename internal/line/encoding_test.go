package line

import (
	"testing"
	"time"
)

func TestMemberRoundTrip(t *testing.T) {
	tests := []Member{
		{TTL: 10 * time.Second, Locker: "L", Waiter: "w"},
		{TTL: time.Millisecond, Locker: "", Waiter: "w/with/slashes"},
	}
	for _, m := range tests {
		t.Run(m.String(), func(t *testing.T) {
			got, err := ParseMember(m.String())
			if err != nil || got != m {
				t.Errorf("ParseMember(%q) = %+v, %v; want %+v", m.String(), got, err, m)
			}
		})
	}
}

func TestParseMemberRejects(t *testing.T) {
	for _, s := range []string{"", "x/L/w", "10/L", "10/L/", "-1/L/w"} {
		if m, err := ParseMember(s); err == nil {
			t.Errorf("ParseMember(%q) = %+v, nil; want an error", s, m)
		}
	}
}

func TestNoticeRoundTrip(t *testing.T) {
	tests := []Notice{
		{},
		{Waiter: "w"},
		{Waiter: "w:with:colons", HandOff: true, Fence: 1 << 52},
	}
	for _, n := range tests {
		t.Run(n.String(), func(t *testing.T) {
			if got := ParseNotice(n.String()); got != n {
				t.Errorf("ParseNotice(%q) = %+v, want %+v", n.String(), got, n)
			}
		})
	}
}

func TestParseNoticeUnknownIsAnyone(t *testing.T) {
	for _, body := range []string{"x", "grant:", "grant:1:", "grant:x:w", "grant:-1:w"} {
		if got := ParseNotice(body); got != (Notice{}) {
			t.Errorf("ParseNotice(%q) = %+v, want the zero Notice (anyone may try)", body, got)
		}
	}
}

package line_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/line"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// run runs body, with the line's Lua in front (Source), on node and returns its reply.
func run(t *testing.T, node *redistest.Node, keys int, body string, keysAndArgs ...any) (any, error) {
	t.Helper()
	c := node.Pool().Get()
	defer c.Close()
	return redis.NewScript(keys, line.Source(body)).Do(c, keysAndArgs...)
}

// TestEncodingsAgreeWithLua runs Go's encodings through the line's Lua and
// back, so that Go and Lua cannot drift apart.
func TestEncodingsAgreeWithLua(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	t.Run("member: Go encodes, Lua parses", func(t *testing.T) {
		m := protocol.Member{TTL: 1500 * time.Millisecond, Locker: "L-1", Waiter: "w/x:y"}
		got, err := redis.Strings(run(t, node, 0, `local ttl, locker, waiter = waitLine("notice").parseMember(ARGV[1])
return {ttl, locker, waiter}`, m.String()))
		want := []string{"1500", m.Locker, m.Waiter}
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("parseMember(%q) = %q, %v; want %q", m.String(), got, err, want)
		}
	})
	t.Run("member: Lua encodes as Go does", func(t *testing.T) {
		m := protocol.Member{TTL: 1500 * time.Millisecond, Locker: "L-1", Waiter: "w/x:y"}
		got, err := redis.String(run(t, node, 0, `return waitLine().member(ARGV[1], ARGV[2], ARGV[3])`, "1500", m.Locker, m.Waiter))
		if err != nil || got != m.String() {
			t.Errorf("member(1500, %q, %q) = %q, %v; want %q", m.Locker, m.Waiter, got, err, m.String())
		}
	})
	t.Run("member: Lua refuses what Go refuses", func(t *testing.T) {
		for _, s := range []string{"x/L/w", "10/L", "10/L/"} {
			got, err := run(t, node, 0, `return waitLine("notice").parseMember(ARGV[1]) and 1 or 0`, s)
			if n, _ := redis.Int(got, err); n != 0 {
				t.Errorf("parseMember(%q) parsed; want nil, as ParseMember refuses it", s)
			}
		}
	})
	t.Run("notices: Lua encodes, Go parses", func(t *testing.T) {
		got, err := redis.Strings(run(t, node, 0, `local L = waitLine("notice")
return {L.headNotice(ARGV[1]), L.handOffNotice(tonumber(ARGV[2]), ARGV[1])}`, "w:1", "1764581234567890"))
		if err != nil {
			t.Fatal(err)
		}
		if n := protocol.ParseNotice(got[0]); n != (protocol.Notice{Waiter: "w:1"}) {
			t.Errorf("ParseNotice(%q) = %+v, want the head notice of w:1", got[0], n)
		}
		if n := protocol.ParseNotice(got[1]); n != (protocol.Notice{Waiter: "w:1", HandOff: true, Fence: 1764581234567890}) {
			t.Errorf("ParseNotice(%q) = %+v, want a hand-off to w:1 with fence 1764581234567890", got[1], n)
		}
	})
	t.Run("inbox", func(t *testing.T) {
		lock := protocol.LockKey("app:", "k")
		got, err := redis.String(run(t, node, 0, `return waitLine("notice").inbox(ARGV[1], ARGV[2])`, protocol.Channel(lock), "L-1"))
		if want := protocol.Inbox(lock, "L-1"); err != nil || got != want {
			t.Errorf("inbox = %q, %v; want %q", got, err, want)
		}
	})
}

// TestFenceCounter checks readFence, nextFence and writeFence on the
// counters a script may find.
func TestFenceCounter(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	const script = `local L = waitLine("fence")
local f = L.writeFence(KEYS[1], L.nextFence(L.readFence(KEYS[1])), ARGV[1], ARGV[2])
return {string.format("%.0f", f), redis.call("PTTL", KEYS[1])}`
	tests := []struct {
		name    string
		set     func() error // the counter before the script
		want    string       // the token; "clock" for the server's µs clock
		wantErr string
	}{
		{name: "no counter: the server's clock", set: func() error { return nil }, want: "clock"},
		{name: "counter", set: func() error { _, err := node.Do("SET", "c", 41); return err }, want: "42"},
		{name: "2^53 - 2", set: func() error { _, err := node.Do("SET", "c", "9007199254740990"); return err }, want: "9007199254740991"},
		{name: "2^53", set: func() error { _, err := node.Do("SET", "c", "9007199254740992"); return err }, wantErr: "not an integer"},
		{name: "2^63 - 1", set: func() error { _, err := node.Do("SET", "c", "9223372036854775807"); return err }, wantErr: "not an integer"},
		{name: "negative", set: func() error { _, err := node.Do("SET", "c", -5); return err }, wantErr: "not an integer"},
		{name: "not a number", set: func() error { _, err := node.Do("SET", "c", "x"); return err }, wantErr: "not an integer"},
		{name: "a hash", set: func() error { _, err := node.Do("HSET", "c", "f", 1); return err }, wantErr: "WRONGTYPE"},
		{name: "a list", set: func() error { _, err := node.Do("RPUSH", "c", 1); return err }, wantErr: "WRONGTYPE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := node.Do("DEL", "c"); err != nil {
				t.Fatal(err)
			}
			if err := tt.set(); err != nil {
				t.Fatal(err)
			}
			before := time.Now().UnixMicro()
			reply, err := redis.Values(run(t, node, 1, script, "c", 1000, 2000))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), "fencing counter c") || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v; want one naming the counter c and saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := redis.String(reply[0], nil)
			pttl, _ := redis.Int64(reply[1], nil)
			if tt.want == "clock" {
				if n, err := redis.Int64(reply[0], nil); err != nil || n < before-int64(time.Second/time.Microsecond) {
					t.Errorf("token = %s; want the server's µs clock, about %d", got, before)
				}
			} else if got != tt.want {
				t.Errorf("token = %s, want %s", got, tt.want)
			}
			if pttl <= 2000 || pttl > 3000 {
				t.Errorf("counter PTTL = %d ms, want the lock TTL + retention, 3000", pttl)
			}
		})
	}
}

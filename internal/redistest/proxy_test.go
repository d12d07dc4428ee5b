package redistest

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proxyTimeout bounds one command through a faulty proxy: long enough for a
// loaded machine to answer through a healthy one.
const proxyTimeout = 300 * time.Millisecond

// proxyDo sends one command on a connection borrowed from the proxy's pool,
// bounded by proxyTimeout, and closes the connection.
func proxyDo(p *Proxy, cmd string, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), proxyTimeout)
	defer cancel()
	c, err := p.Pool().GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// isTimeout reports whether err is a context deadline or an i/o timeout,
// the two ways redigo reports a reply that did not come in time.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}

func TestProxyFaults(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	tests := []struct {
		name  string
		fault func(*Proxy)
		mode  string
		// wantReply: the client gets its reply; wantWrite: the SET reaches
		// Redis.
		wantReply, wantWrite bool
	}{
		{name: "pass", fault: func(*Proxy) {}, mode: "pass", wantReply: true, wantWrite: true},
		{name: "heal", fault: func(p *Proxy) { p.BlackHole(); p.Heal() }, mode: "pass", wantReply: true, wantWrite: true},
		{name: "drop replies", fault: (*Proxy).DropReplies, mode: "drop-replies", wantReply: false, wantWrite: true},
		{name: "black hole", fault: (*Proxy).BlackHole, mode: "black-hole", wantReply: false, wantWrite: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := NewProxy(t, node.Addr())
			if p.Target() != node.Addr() || p.Addr() == node.Addr() {
				t.Fatalf("proxy at %s to %s, want a new address to %s", p.Addr(), p.Target(), node.Addr())
			}
			tc.fault(p)
			if got := p.Mode(); got != tc.mode {
				t.Fatalf("Mode() = %q, want %q", got, tc.mode)
			}
			key := "proxy:" + tc.name
			reply, err := redis.String(proxyDo(p, "SET", key, "v"))
			switch {
			case tc.wantReply && (err != nil || reply != "OK"):
				t.Errorf("SET through the proxy = %q, %v; want OK", reply, err)
			case !tc.wantReply && !isTimeout(err):
				t.Errorf("SET through the proxy = %q, %v; want a timeout", reply, err)
			}
			if v, ok := getString(t, node, key); ok != tc.wantWrite || ok && v != "v" {
				t.Errorf("GET %s on the node = %q (exists %v); want exists %v", key, v, ok, tc.wantWrite)
			}
			// Healed, a new connection works whatever came before.
			p.Heal()
			if pong, err := redis.String(proxyDo(p, "PING")); err != nil || pong != "PONG" {
				t.Errorf("PING after Heal = %q, %v; want PONG", pong, err)
			}
		})
	}
}

func TestProxyDelay(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	node := Start(t, 1)[0]
	p := NewProxy(t, node.Addr())
	c := p.Pool().Get()
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		t.Fatalf("PING before Delay: %v", err)
	}
	p.Delay(d)
	if got, want := p.Mode(), "delay 100ms"; got != want {
		t.Fatalf("Mode() = %q, want %q", got, want)
	}
	start := time.Now()
	// Two commands pipelined: both come back, in order, a round trip late.
	if err := c.Send("SET", "delayed", "1"); err != nil {
		t.Fatal(err)
	}
	reply, err := redis.String(c.Do("GET", "delayed"))
	elapsed := time.Since(start)
	if err != nil || reply != "1" {
		t.Fatalf("SET then GET through the delaying proxy = %q, %v; want \"1\"", reply, err)
	}
	if elapsed < 2*d {
		t.Errorf("round trip through Delay(%v) took %v, want at least %v", d, elapsed, 2*d)
	}
	t.Logf("round trip with Delay(%v): %v", d, elapsed)
	p.Delay(0)
	if got := p.Mode(); got != "pass" {
		t.Errorf("Mode() after Delay(0) = %q, want pass", got)
	}
}

// TestProxyBlackHoleKeepsConnections checks that a black hole neither
// closes the connections open through it nor refuses new ones, and that a
// connection left idle during the fault works after Heal.
func TestProxyBlackHoleKeepsConnections(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	p := NewProxy(t, node.Addr())
	idle := p.Pool().Get()
	defer idle.Close()
	if _, err := idle.Do("PING"); err != nil {
		t.Fatalf("PING before BlackHole: %v", err)
	}
	p.BlackHole()
	// A new connection is accepted and stays open; it just gets nothing.
	raw, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatalf("dial the black-holed proxy: %v", err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("PING\r\n")); err != nil {
		t.Fatalf("write PING to the black-holed proxy: %v", err)
	}
	if err := raw.SetReadDeadline(time.Now().Add(proxyTimeout)); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.Read(make([]byte, 64)); !isTimeout(err) {
		t.Errorf("read on a black-holed connection = %d bytes, %v; want a timeout (open, silent)", n, err)
	}
	// The accept loop counts the connection right after accepting it.
	eventually(t, 2*time.Second, "Accepted() reaches 2", func() bool { return p.Accepted() == 2 })
	p.Heal()
	if pong, err := redis.String(idle.Do("PING")); err != nil || pong != "PONG" {
		t.Errorf("PING after Heal on the connection opened before the fault = %q, %v; want PONG", pong, err)
	}
}

// TestProxyDropRepliesHealed shows a lost reply whose connection the client
// throws away: a SET reaches Redis, its reply never comes, and after Heal the
// pool's next connection works.
func TestProxyDropRepliesHealed(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	p := NewProxy(t, node.Addr())
	p.DropReplies()
	if _, err := proxyDo(p, "INCR", "lost"); !isTimeout(err) {
		t.Fatalf("INCR with its reply dropped = %v, want a timeout", err)
	}
	if n, err := redis.Int(node.Do("GET", "lost")); err != nil || n != 1 {
		t.Fatalf("GET lost on the node = %d, %v; want 1 (the INCR reached Redis)", n, err)
	}
	// Healed once the INCR timed out, not on a timer that a slow INCR
	// could come after.
	p.Heal()
	require.Equal(t, "pass", p.Mode(), "Mode() after Heal")
	if n, err := redis.Int(proxyDo(p, "INCR", "lost")); err != nil || n != 2 {
		t.Errorf("INCR after Heal = %d, %v; want 2", n, err)
	}
}

func TestProxyResetAndClose(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	var addr string
	t.Run("reset", func(t *testing.T) {
		p := NewProxy(t, node.Addr())
		addr = p.Addr()
		c := p.Pool().Get()
		defer c.Close()
		if _, err := c.Do("PING"); err != nil {
			t.Fatalf("PING before Reset: %v", err)
		}
		p.Reset()
		if _, err := c.Do("PING"); err == nil {
			t.Error("PING on a connection the proxy reset succeeded, want an error")
		}
		if pong, err := redis.String(proxyDo(p, "PING")); err != nil || pong != "PONG" {
			t.Errorf("PING on a new connection after Reset = %q, %v; want PONG", pong, err)
		}
	})
	// The subtest's cleanup closed the proxy: nothing listens there now.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s after the proxy's test ended succeeded, want refused", addr)
	}
}

func TestProxyToDeadTarget(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	p := NewProxy(t, node.Addr())
	node.Kill()
	if _, err := proxyDo(p, "PING"); err == nil || isTimeout(err) {
		t.Errorf("PING through a proxy to a killed node = %v, want the connection closed at once", err)
	}
}

// TestProxyDropNextReplies checks that DropNextReplies discards exactly the
// next replies, whole, and forwards the rest of the stream intact: on a
// pipelined connection the first command's reply is lost and the second's
// arrives first; then a command whose reply is lost times out, its write
// done, and the command after it works without Heal.
func TestProxyDropNextReplies(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	mustDo(t, node, "RPUSH", "list", "a", "b\r\nc")
	p := NewProxy(t, node.Addr())
	c, err := redis.Dial("tcp", p.Addr(), redis.DialReadTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("dial the proxy: %v", err)
	}
	defer c.Close()
	if _, err := c.Do("PING"); err != nil { // the connection is up before the count is armed
		t.Fatalf("PING: %v", err)
	}
	p.DropNextReplies(2)
	if got, want := p.Mode(), "pass, drop next 2 replies"; got != want {
		t.Errorf("Mode() = %q, want %q", got, want)
	}
	for _, cmd := range [][]any{{"LRANGE", "list", 0, -1}, {"SET", "k", "1"}, {"LRANGE", "list", 0, -1}} {
		if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := redis.Strings(c.Receive())
	if err != nil || len(got) != 2 || got[0] != "a" || got[1] != "b\r\nc" {
		t.Fatalf("first reply received = %q, %v; want the third command's [a b\\r\\nc]", got, err)
	}
	if v, _ := getString(t, node, "k"); v != "1" {
		t.Errorf("GET k on the node = %q, want \"1\" (the SET whose reply was dropped took effect)", v)
	}
	if got := p.Mode(); got != "pass" {
		t.Errorf("Mode() after the replies were dropped = %q, want pass", got)
	}

	p.DropNextReplies(1)
	if _, err := proxyDo(p, "INCR", "n"); !isTimeout(err) {
		t.Errorf("INCR with its reply dropped = %v, want a timeout", err)
	}
	if n, err := redis.Int(proxyDo(p, "INCR", "n")); err != nil || n != 2 {
		t.Errorf("INCR after the dropped reply = %d, %v; want 2", n, err)
	}
	p.DropNextReplies(5)
	p.Heal()
	if got := p.Mode(); got != "pass" {
		t.Errorf("Mode() after Heal = %q, want pass (the count cleared)", got)
	}
}

// TestProxyDropReplyTo checks that DropReplyTo discards the reply to the
// next command of that name sent after it, whole, and no other: on a
// pipelined connection a GET sent before it was armed keeps its reply, the
// first SET after it loses its reply (the SET still runs), and the
// commands around it, a second SET included, get theirs in order.
func TestProxyDropReplyTo(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	mustDo(t, node, "SET", "before", "b\r\n$3\r\nSET")
	p := NewProxy(t, node.Addr())
	c, err := redis.Dial("tcp", p.Addr(), redis.DialReadTimeout(2*time.Second))
	require.NoError(t, err, "dial the proxy")
	defer c.Close()
	require.NoError(t, c.Send("GET", "before"))
	require.NoError(t, c.Flush())
	p.DropReplyTo("set")
	for _, cmd := range [][]any{{"INCR", "n"}, {"SET", "k", "1"}, {"SET", "k2", "2"}, {"GET", "k"}} {
		require.NoError(t, c.Send(cmd[0].(string), cmd[1:]...))
	}
	require.NoError(t, c.Flush())
	got, err := redis.String(c.Receive())
	require.NoError(t, err, "the GET sent before DropReplyTo")
	assert.Equal(t, "b\r\n$3\r\nSET", got, "reply to the GET sent before DropReplyTo")
	n, err := redis.Int(c.Receive())
	require.NoError(t, err, "INCR's reply")
	assert.Equal(t, 1, n, "INCR's reply")
	ok, err := redis.String(c.Receive())
	require.NoError(t, err, "the second SET's reply")
	assert.Equal(t, "OK", ok, "the reply after INCR's: want the second SET's, the first SET's dropped")
	v, err := redis.String(c.Receive())
	require.NoError(t, err, "GET k's reply")
	assert.Equal(t, "1", v, "GET k through the proxy: the SET whose reply was dropped took effect")
	assert.Equal(t, "pass", p.Mode(), "Mode() once the reply was dropped")
}

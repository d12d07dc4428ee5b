package strategytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// tracedPool records the commands sent on the connections it lends to a
// scenario client (a context naming one, see as); connections lent to
// anyone else are the wrapped pool's, untouched.
type tracedPool struct {
	pool strategy.Pool
	rec  *recorder
	node string // "" for a technique's only node, "node 2", "replica"
}

var _ strategy.Pool = tracedPool{}

func (p tracedPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	who := clientOf(ctx)
	if err != nil || c == nil || who == "" {
		return c, err
	}
	return &tracedConn{Conn: c, rec: p.rec, node: p.node, who: who}, nil
}

// tracedConn records each command sent on one lent connection with its
// reply. It implements redis.ConnWithContext and redis.ConnWithTimeout,
// passing each on to the wrapped connection, so that the technique bounds
// its calls exactly as it would without it.
type tracedConn struct {
	redis.Conn
	rec  *recorder
	node string
	who  string

	mu      sync.Mutex
	pending []sent // Sent, reply not yet read
}

type sent struct {
	event int
	start time.Time
}

var (
	_ redis.ConnWithContext = (*tracedConn)(nil)
	_ redis.ConnWithTimeout = (*tracedConn)(nil)
)

// errNoTimeout is what a tracedConn says when the wrapped connection
// cannot bound a call as asked; redigo's own connections always can.
var errNoTimeout = errors.New("lockzoo: strategytest: connection does not support a timeout")

// begin records cmd as sent now.
func (c *tracedConn) begin(cmd string, args []any) sent {
	i, _ := c.rec.add(Event{Kind: EventCommand, Client: c.who, Node: c.node, Op: strings.ToUpper(cmd), Args: argsText(args)})
	return sent{event: i, start: time.Now()}
}

// end records the reply to s.
func (c *tracedConn) end(s sent, reply any, err error) {
	took := time.Since(s.start)
	c.rec.replied(s.event, replyText(reply, err), took)
}

// do runs one Do-like call through f. cmd "" flushes the pipeline and reads
// every pending reply, which are then the pending commands' replies; a
// command's own Do reads the pending replies without returning them.
func (c *tracedConn) do(cmd string, args []any, f func() (any, error)) (any, error) {
	c.mu.Lock()
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	if cmd == "" {
		reply, err := f()
		replies, _ := reply.([]any)
		for i, s := range pending {
			if err == nil && i < len(replies) {
				c.end(s, replies[i], nil)
			} else {
				c.end(s, nil, err)
			}
		}
		return reply, err
	}
	s := c.begin(cmd, args)
	reply, err := f()
	c.end(s, reply, err)
	return reply, err
}

// received gives the reply of a Receive to the oldest pending command; a
// reply with none pending (a pub/sub message) is not recorded.
func (c *tracedConn) received(reply any, err error) (any, error) {
	c.mu.Lock()
	var s *sent
	if len(c.pending) > 0 {
		s = &c.pending[0]
		c.pending = c.pending[1:]
	}
	c.mu.Unlock()
	if s != nil {
		c.end(*s, reply, err)
	}
	return reply, err
}

func (c *tracedConn) Do(cmd string, args ...any) (any, error) {
	return c.do(cmd, args, func() (any, error) { return c.Conn.Do(cmd, args...) })
}

func (c *tracedConn) Send(cmd string, args ...any) error {
	s := c.begin(cmd, args)
	c.mu.Lock()
	c.pending = append(c.pending, s)
	c.mu.Unlock()
	return c.Conn.Send(cmd, args...)
}

func (c *tracedConn) Receive() (any, error) { return c.received(c.Conn.Receive()) }

func (c *tracedConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	return c.do(cmd, args, func() (any, error) { return redis.DoContext(c.Conn, ctx, cmd, args...) })
}

func (c *tracedConn) ReceiveContext(ctx context.Context) (any, error) {
	return c.received(redis.ReceiveContext(c.Conn, ctx))
}

func (c *tracedConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	cwt, ok := c.Conn.(redis.ConnWithTimeout)
	if !ok {
		return nil, errNoTimeout
	}
	return c.do(cmd, args, func() (any, error) { return cwt.DoWithTimeout(timeout, cmd, args...) })
}

func (c *tracedConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	cwt, ok := c.Conn.(redis.ConnWithTimeout)
	if !ok {
		return nil, errNoTimeout
	}
	return c.received(cwt.ReceiveWithTimeout(timeout))
}

// argsText renders a command's arguments on one short line.
func argsText(args []any) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch a := a.(type) {
		case string:
			if a == "" {
				a = `""`
			}
			parts = append(parts, shortArg(a))
		case []byte:
			parts = append(parts, shortArg(string(a)))
		default:
			parts = append(parts, fmt.Sprint(a))
		}
	}
	return shorten(strings.Join(parts, " "), 64)
}

// replyText renders a reply: OK, nil, 1, "3f2a8c1e…", [1 0], or the error.
func replyText(reply any, err error) string {
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return shorten(string(re), 50)
		}
		return "error: " + shorten(err.Error(), 50)
	}
	switch r := reply.(type) {
	case nil:
		return "nil"
	case []byte:
		return shortReply(string(r))
	case string:
		return shortReply(r)
	case redis.Error:
		return shorten(string(r), 50)
	case []any:
		var parts []string
		for i, v := range r {
			if i == 6 {
				parts = append(parts, fmt.Sprintf("+%d", len(r)-i))
				break
			}
			parts = append(parts, replyText(v, nil))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(reply)
}

// shortReply shortens a long bulk reply: text (INFO's) to its size, a
// token to its first 8 characters.
func shortReply(s string) string {
	if len(s) > 20 && strings.ContainsAny(s, " \n") {
		return fmt.Sprintf("<%d bytes of text>", len(s))
	}
	return shortArg(s)
}

// shortArg shortens a long argument: a script's source to its size, a
// token or hash to its first 8 characters.
func shortArg(s string) string {
	switch {
	case len(s) <= 20:
		return s
	case strings.ContainsAny(s, " \n"):
		return fmt.Sprintf("<script, %d bytes>", len(s))
	case strings.Contains(s, ":"):
		return shorten(s, 28) // a key: its prefix shows whose it is
	}
	return s[:8] + "…"
}

// shorten cuts s to at most n bytes (a UTF-8 boundary), marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

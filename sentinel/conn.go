package sentinel

import (
	"context"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// conn is a connection lent by a Pool: redigo's pooled connection, which
// it passes every call to, watching the replies for READONLY. A node that
// answers READONLY has become a replica (the old master after a
// failover), so the connection's target is marked suspect and the next
// GetContext asks the Sentinels before lending another. The caller gets
// the READONLY error as it came: the command did not run.
type conn struct {
	redis.Conn
	t *target
}

// Compile-time checks that a conn keeps the interfaces that let a ctx or
// a timeout bound its commands.
var (
	_ redis.ConnWithContext = (*conn)(nil)
	_ redis.ConnWithTimeout = (*conn)(nil)
)

// Do runs a command (see redis.Conn).
func (c *conn) Do(cmd string, args ...any) (any, error) {
	reply, err := c.Conn.Do(cmd, args...)
	c.watch(cmd, reply, err)
	return reply, err
}

// DoContext runs a command bounded by ctx (see redis.ConnWithContext).
func (c *conn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	reply, err := redis.DoContext(c.Conn, ctx, cmd, args...)
	c.watch(cmd, reply, err)
	return reply, err
}

// DoWithTimeout runs a command bounded by timeout (see
// redis.ConnWithTimeout).
func (c *conn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	reply, err := redis.DoWithTimeout(c.Conn, timeout, cmd, args...)
	c.watch(cmd, reply, err)
	return reply, err
}

// Receive reads a reply (see redis.Conn).
func (c *conn) Receive() (any, error) {
	reply, err := c.Conn.Receive()
	c.watch("", reply, err)
	return reply, err
}

// ReceiveContext reads a reply bounded by ctx (see redis.ConnWithContext).
func (c *conn) ReceiveContext(ctx context.Context) (any, error) {
	reply, err := redis.ReceiveContext(c.Conn, ctx)
	c.watch("", reply, err)
	return reply, err
}

// ReceiveWithTimeout reads a reply bounded by timeout (see
// redis.ConnWithTimeout).
func (c *conn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	reply, err := redis.ReceiveWithTimeout(c.Conn, timeout)
	c.watch("", reply, err)
	return reply, err
}

// watch marks c's target suspect when err, or with cmd "" (a flush, whose
// reply lists the pending replies) one of the replies, is READONLY.
func (c *conn) watch(cmd string, reply any, err error) {
	if e, ok := err.(redis.Error); ok && readOnly(e) {
		c.t.suspect.Store(true)
		return
	}
	if cmd != "" || err != nil {
		return
	}
	if replies, ok := reply.([]any); ok {
		for _, r := range replies {
			if e, ok := r.(redis.Error); ok && readOnly(e) {
				c.t.suspect.Store(true)
				return
			}
		}
	}
}

// readOnly reports whether e is a replica's refusal of a write, from a
// command or a script.
func readOnly(e redis.Error) bool {
	return strings.HasPrefix(string(e), "READONLY ")
}

package cluster

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// Redirection bounds.
const (
	// maxRedirects is how many times one command is sent again after a
	// MOVED or ASK before it fails with ErrRedirected.
	maxRedirects = 8
	// tryAgainWait is the first wait before a command that got TRYAGAIN
	// (some of its keys moved during a slot's migration, not all) is sent
	// again; it doubles up to tryAgainMax.
	tryAgainWait = 2 * time.Millisecond
	tryAgainMax  = 50 * time.Millisecond
	// tryAgainFor bounds how long a command is sent again on TRYAGAIN,
	// within its own bound: a migration moves a slot's keys in a moment.
	tryAgainFor = 2 * time.Second
)

// redirection is a MOVED, ASK or TRYAGAIN reply, or CLUSTERDOWN.
type redirection struct {
	kind string // "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN"
	slot int
	addr string
}

// parseRedirection reads e; ok is false for any other error reply.
func parseRedirection(e redis.Error) (redirection, bool) {
	s := string(e)
	switch {
	case strings.HasPrefix(s, "MOVED "), strings.HasPrefix(s, "ASK "):
		f := strings.Fields(s)
		if len(f) != 3 {
			return redirection{}, false
		}
		slot, err := strconv.Atoi(f[1])
		if err != nil || slot < 0 || slot >= Slots {
			return redirection{}, false
		}
		// ":port" (an unknown endpoint) means the replying node's host
		// (withHost).
		return redirection{kind: f[0], slot: slot, addr: f[2]}, true
	case strings.HasPrefix(s, "TRYAGAIN"):
		return redirection{kind: "TRYAGAIN"}, true
	case strings.HasPrefix(s, "CLUSTERDOWN"):
		return redirection{kind: "CLUSTERDOWN"}, true
	}
	return redirection{}, false
}

// withHost completes an address ":port" of a redirection from the node
// at from with from's host.
func (rd redirection) withHost(from string) redirection {
	if strings.HasPrefix(rd.addr, ":") {
		if host, _, err := net.SplitHostPort(from); err == nil {
			rd.addr = net.JoinHostPort(host, rd.addr[1:])
		}
	}
	return rd
}

// clusterDown turns a CLUSTERDOWN reply into a refusal wrapping
// ErrSlotUnserved (the key's slot has no master) or ErrClusterDown.
func clusterDown(cmd string, e redis.Error) error {
	if strings.Contains(string(e), "not served") {
		return refused(fmt.Errorf("%s: %w: %s", cmd, ErrSlotUnserved, e))
	}
	return refused(fmt.Errorf("%s: %w: %s", cmd, ErrClusterDown, e))
}

// refused marks err as the failure of one command that did not run (a
// redisconn.Refusal): the connection stays in step, and nothing is taken
// back after it.
func refused(err error) error {
	return &redisconn.Refusal{Err: err}
}

// settle returns the reply r, err of s, after following a redirection:
// MOVED updates the map and sends s again to the node it names; ASK sends
// ASKING then s, once, to the importing node it names; TRYAGAIN sends s
// again after a wait; each as often as maxRedirects (redo). A command
// queued in a transaction is not sent again: its EXEC fails
// (EXECABORT), and settle turns that EXEC's reply into a nil one, as if a
// WATCH had aborted it, for nothing of it ran: the caller's next try goes
// to the slot's new master. CLUSTERDOWN is returned as an error wrapping
// ErrClusterDown or ErrSlotUnserved.
func (c *conn) settle(s *sent, r any, err error, b bound, own bool) (any, error) {
	e, refused := err.(redis.Error)
	if s.exec {
		c.mu.Lock()
		moved := c.txMoved
		c.txMoved = false
		c.mu.Unlock()
		if refused && moved && strings.HasPrefix(string(e), "EXECABORT") {
			return nil, nil
		}
	}
	if !refused {
		return r, err
	}
	rd, ok := parseRedirection(e)
	rd = rd.withHost(s.l.n.addr)
	switch {
	case !ok:
		return r, err
	case rd.kind == "CLUSTERDOWN":
		c.p.topo.request()
		return nil, clusterDown(s.name, e)
	case rd.kind == "MOVED":
		c.p.moved(rd.slot, rd.addr)
	}
	if s.inTx {
		// Not queued: the EXEC will abort, and reads as aborted (nil).
		c.mu.Lock()
		c.txMoved = true
		c.mu.Unlock()
		return nil, nil
	}
	if rd.kind == "TRYAGAIN" {
		if !own {
			return r, err // see redo
		}
		rd.addr = s.l.n.addr
	}
	return c.redo(s, rd, b, own)
}

// redo sends s again where rd says, and follows further redirections,
// up to maxRedirects. TRYAGAIN is waited out only when own: among
// pipelined commands (a redisconn.Pipeline's), the wait would hold back
// every reply behind this one until the stream's deadline, which fails
// them all as commands that may have run; there TRYAGAIN is the
// command's reply (it did not run), and its caller tries again. It sends on a connection of its own from the
// node's pool, since other commands may await their replies on c's, or,
// when own (a Do of one command alone on c), on c's own connection to
// the node, which then becomes c's node for commands without a key.
func (c *conn) redo(s *sent, rd redirection, b bound, own bool) (any, error) {
	ctx, cancel := b.context()
	defer cancel()
	wait, redirects := tryAgainWait, 0
	var asked bool // the last redirection was ASK: TRYAGAIN keeps ASKING
	var until time.Time
	for {
		switch rd.kind {
		case "TRYAGAIN":
			if until.IsZero() {
				until = time.Now().Add(tryAgainFor)
			}
			if time.Now().After(until) {
				return nil, refused(fmt.Errorf("%s: %w (TRYAGAIN for %v)", s.name, ErrRedirected, tryAgainFor))
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			wait = min(wait*2, tryAgainMax)
			if asked {
				rd.kind = "ASK"
			}
		default:
			if redirects++; redirects > maxRedirects {
				return nil, refused(fmt.Errorf("%s: %w (%d times, the last %s %d %s)", s.name, ErrRedirected, maxRedirects, rd.kind, rd.slot, rd.addr))
			}
			if redirects > 2 {
				// Masters that disagree on the slot for a moment (a move
				// whose epoch has not spread yet) send it back and forth:
				// give them time.
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				wait = min(wait*2, tryAgainMax)
			}
			asked = rd.kind == "ASK"
		}
		r, err := c.sendTo(ctx, s, rd, b, own)
		e, refused := err.(redis.Error)
		if !refused {
			return r, err
		}
		next, ok := parseRedirection(e)
		next = next.withHost(rd.addr)
		switch {
		case !ok:
			return r, err
		case next.kind == "CLUSTERDOWN":
			c.p.topo.request()
			return nil, clusterDown(s.name, e)
		case next.kind == "MOVED":
			c.p.moved(next.slot, next.addr)
		case next.kind == "TRYAGAIN":
			if !own {
				return r, err
			}
			next.addr = rd.addr
		}
		rd = next
	}
}

// sendTo sends s (after ASKING for an ASK) to the node at rd.addr and
// reads its reply; see redo for own.
func (c *conn) sendTo(ctx context.Context, s *sent, rd redirection, b bound, own bool) (any, error) {
	n := c.p.nodeAt(rd.addr)
	var rc redis.Conn
	if own {
		c.mu.Lock()
		l, err := c.link(ctx, n)
		if err == nil {
			c.last = l
		}
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		rc = l.c
		c.mu.Lock()
		c.asked, c.askedSlot = nil, 0
		if rd.kind == "ASK" {
			c.asked, c.askedSlot = l, c.lastSlot
		}
		c.mu.Unlock()
	} else {
		var err error
		if rc, err = n.pool.GetContext(ctx); err != nil {
			c.p.topo.request()
			return nil, fmt.Errorf("%s: connect to %s: %w", s.name, rd.addr, err)
		}
		defer rc.Close()
	}
	if rd.kind == "ASK" {
		if err := rc.Send("ASKING"); err != nil {
			return nil, c.linkFailed(own, rd.addr, err)
		}
	}
	if err := rc.Send(s.name, s.args...); err != nil {
		return nil, c.linkFailed(own, rd.addr, err)
	}
	if err := rc.Flush(); err != nil {
		return nil, c.linkFailed(own, rd.addr, err)
	}
	if rd.kind == "ASK" {
		if _, err := recv(rc, b); err != nil {
			if _, refused := err.(redis.Error); !refused {
				return nil, c.linkFailed(own, rd.addr, err)
			}
		}
	}
	r, err := recv(rc, b)
	if err != nil && !isReply(err) {
		return nil, c.linkFailed(own, rd.addr, err)
	}
	return r, err
}

// linkFailed reports a failure of the connection to addr: c fails too
// when it was c's own.
func (c *conn) linkFailed(own bool, addr string, err error) error {
	err = fmt.Errorf("redirected to %s: %w", addr, err)
	c.p.topo.request()
	if own {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.fail(err)
	}
	return err
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

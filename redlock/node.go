package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/breaker"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// node is one Redis master: its shared connections, its breaker, the
// releases it is owed and what the restart guard remembers of it.
type node struct {
	index        int
	pipe         *redisconn.Pipeline
	br           breaker.Breaker
	owed         owed
	acquirePoint string // fault points tests gate: pointAcquireOn(index)
	releasePoint string // and pointReleaseOn(index)

	mu    sync.Mutex // guards runID
	runID string     // "" before the first check
	// excludedUntil is when the node counts in quorums again, in ns of
	// clock; 0 when never excluded.
	excludedUntil atomic.Int64
}

// link is one call's way to its node, through the node's Pipeline; lost
// records that an exchange got no reply, which the breaker counts. One
// goroutine uses it at a time.
type link struct {
	n    *node
	lost bool
}

// send runs cmd on the node, bounded by ctx; an error reply is a
// redis.Error.
func (l *link) send(ctx context.Context, cmd string, args []any) (any, error) {
	reply, err := l.n.pipe.Do(ctx, cmd, args)
	l.note(err)
	return reply, err
}

// sendTwo runs first and second one right after the other on one
// connection.
func (l *link) sendTwo(ctx context.Context, first, second redisconn.Command) (redisconn.Reply, redisconn.Reply, error) {
	r1, r2, err := l.n.pipe.DoTwo(ctx, first, second)
	l.note(err)
	return r1, r2, err
}

// note marks the link lost when err is a failure without a reply.
func (l *link) note(err error) {
	if _, refused := err.(redis.Error); err != nil && !refused {
		l.lost = true
	}
}

// guarded runs fn and turns a panic in it into an error wrapping
// redisconn.ErrPanicked.
func guarded(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", redisconn.ErrPanicked, v)
		}
	}()
	fn()
	return nil
}

// call runs op on n over a new link and tells n's breaker whether the node
// replied; probe is what n.br.admit said. A panic in the user's pool or
// connection is the node's failure, one that may hold the lock. It returns
// the link for a call that follows on the same node.
func (t *technique) call(ctx context.Context, n *node, probe bool, op nodeOp) (*link, answer) {
	l := &link{n: n}
	var a answer
	if err := guarded(func() { a = op(ctx, l) }); err != nil {
		l.lost = true
		a = answer{vote: voteFailed, err: err, mayHold: true}
	}
	a.node = n.index
	n.br.Settle(probe, !l.lost, a.err)
	return l, a
}

// clientName marks the connections the restart guard has checked; a
// connection without it is new and may lead to a restarted node.
const clientName = "lockzoo-redlock"

// clock gives monotonic instants as durations since origin, to fit in an
// atomic.Int64.
type clock struct{ origin time.Time }

func (c clock) now() int64 { return int64(time.Since(c.origin)) }

// excluded reports whether the restart guard leaves n out of quorums at now.
func (n *node) excluded(now int64) bool { return now < n.excludedUntil.Load() }

// saw records the run_id a new connection found on n; when it changed, the
// node restarted and is excluded until now+hold. It reports a restart.
func (n *node) saw(runID string, now int64, hold time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	restarted := n.runID != "" && n.runID != runID
	n.runID = runID
	if until := now + int64(hold); restarted && until > n.excludedUntil.Load() {
		n.excludedUntil.Store(until)
	}
	return restarted
}

// exchange runs one command on l's node. With the restart guard on, CLIENT
// GETNAME travels right before it on the same connection, so a known
// connection costs one round trip; a new one costs one more (learn).
func (t *technique) exchange(ctx context.Context, l *link, cmd string, args ...any) (any, error) {
	if !t.s.guard {
		return l.send(ctx, cmd, args)
	}
	name, r, err := l.sendTwo(ctx, t.getname, redisconn.Command{Name: cmd, Args: args})
	if err != nil {
		return nil, err
	}
	var known bool
	switch v := name.Value.(type) {
	case []byte:
		known = string(v) == clientName // compared without a string
	case nil:
		err = name.Err
	default:
		err = fmt.Errorf("unexpected reply %T", v)
	}
	if err != nil {
		return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): %w", err)
	}
	if !known {
		if err := t.learn(ctx, l); err != nil {
			return nil, ranError{err}
		}
	}
	return r.Value, r.Err
}

// ranError is a failed check of a new connection (learn) after the
// command ran there. It never reads as redisconn.ErrNotSent, so an acquire
// that failed so is taken back like one that lost its reply.
type ranError struct{ err error }

func (e ranError) Error() string {
	return "the command ran, but the restart guard's check of its new connection failed: " + e.err.Error()
}

// Is reports whether the check's failure is target, unless target is
// redisconn.ErrNotSent.
func (e ranError) Is(target error) bool {
	return target != redisconn.ErrNotSent && errors.Is(e.err, target)
}

// learn checks a new connection in one round trip: it reads the server's
// run_id (INFO server), names the connection, and updates the node
// (node.saw). Concurrent callers may each learn: redundant but harmless.
func (t *technique) learn(ctx context.Context, l *link) error {
	info, named, err := l.sendTwo(ctx, redisconn.Command{Name: "INFO", Args: []any{"server"}}, redisconn.Command{Name: "CLIENT", Args: []any{"SETNAME", clientName}})
	if err != nil {
		return err
	}
	text, err := redis.String(info.Value, info.Err)
	if err != nil {
		return fmt.Errorf("INFO server for the restart guard: %w", err)
	}
	if named.Err != nil {
		return fmt.Errorf("CLIENT SETNAME for the restart guard: %w", named.Err)
	}
	id := runID(text)
	if id == "" {
		return errors.New("INFO server has no run_id for the restart guard")
	}
	l.n.saw(id, t.clock.now(), t.exclusion())
	return nil
}

// runID returns the run_id field of an INFO reply, or "".
func runID(info string) string { return strings.TrimSpace(redisinfo.Fields(info)["run_id"]) }

// exclusion is how long a restarted node stays out of quorums: the
// longest TTL this Locker used, plus its drift allowance.
func (t *technique) exclusion() time.Duration {
	ttl := time.Duration(t.maxTTL.Load())
	return ttl + t.s.driftFor(ttl)
}

// noteTTL raises the longest TTL seen to ttl.
func (t *technique) noteTTL(ttl time.Duration) {
	for {
		cur := t.maxTTL.Load()
		if int64(ttl) <= cur || t.maxTTL.CompareAndSwap(cur, int64(ttl)) {
			return
		}
	}
}

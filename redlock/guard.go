package redlock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/strategy"
)

// clientName marks the connections the restart guard has already checked.
// A connection without it is new: it was dialled after the last check, so
// it may lead to a node that restarted.
const clientName = "lockzoo-redlock"

// node is one Redis master and what the restart guard remembers of it.
type node struct {
	index int
	pool  strategy.Pool
	br    breaker
	// acquirePoint is the fault point an acquire reaches on this node just
	// before it sends its request (pointAcquireOn).
	acquirePoint string
	// releasePoint is the fault point a release reaches on this node just
	// before it sends its request (pointReleaseOn).
	releasePoint string

	mu    sync.Mutex // guards runID
	runID string     // the server's run_id when last checked; "" before the first check

	// excludedUntil is when the node may count in quorums again, in
	// nanoseconds since the Locker's monotonic origin; 0 when never
	// excluded.
	excludedUntil atomic.Int64
}

// clock gives monotonic instants as durations since a fixed origin, so that
// they fit in an atomic.Int64 and ignore wall-clock jumps.
type clock struct{ origin time.Time }

func (c clock) now() int64 { return int64(time.Since(c.origin)) }

// excluded reports whether the restart guard leaves n out of quorums at now.
func (n *node) excluded(now int64) bool { return now < n.excludedUntil.Load() }

// saw records the run_id a new connection found on n. When it differs from
// the one remembered, the node restarted (and lost its locks, without
// persistence): it is excluded until now+hold. It returns whether the node
// restarted.
func (n *node) saw(runID string, now int64, hold time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	restarted := n.runID != "" && n.runID != runID
	n.runID = runID
	if until := now + int64(hold); restarted && until > n.excludedUntil.Load() {
		n.excludedUntil.Store(until) // only saw writes it, under n.mu
	}
	return restarted
}

// exchange runs one command on c and returns its reply (an error reply is
// returned as the error). With the restart guard on, CLIENT GETNAME travels
// in the same pipeline, so a known connection still costs one round trip;
// on a new connection (no lockzoo name yet) the guard spends one more round
// trip to read the node's run_id and name the connection (see learn).
func (t *technique) exchange(ctx context.Context, n *node, c redis.Conn, cmd string, args ...any) (any, error) {
	if !t.s.guard {
		return do(ctx, c, cmd, args...)
	}
	if err := c.Send("CLIENT", t.getname...); err != nil {
		return nil, err
	}
	if err := c.Send(cmd, args...); err != nil {
		return nil, err
	}
	name, reply, nameErr, err, failed := doTwo(ctx, c)
	if failed != nil {
		return nil, failed
	}
	var known bool
	switch name := name.(type) {
	case []byte: // compared without making a string of it
		known = string(name) == clientName
	case nil:
		if nameErr != nil {
			return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): %w", nameErr)
		}
	default:
		return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): unexpected reply %T", name)
	}
	if !known {
		if err := t.learn(ctx, n, c); err != nil {
			return nil, err
		}
	}
	return reply, err
}

// learn checks a new connection: one pipelined round trip reads the
// server's run_id (INFO server) and names the connection, then the node's
// remembered run_id is compared and updated (node.saw).
func (t *technique) learn(ctx context.Context, n *node, c redis.Conn) error {
	if err := c.Send("INFO", "server"); err != nil {
		return err
	}
	if err := c.Send("CLIENT", "SETNAME", clientName); err != nil {
		return err
	}
	replies, err := redis.Values(do(ctx, c, ""))
	if err != nil {
		return err
	}
	if len(replies) != 2 {
		return fmt.Errorf("pipeline of 2 commands got %d replies", len(replies))
	}
	info, err := redis.String(replies[0], nil)
	if err != nil {
		return fmt.Errorf("INFO server for the restart guard: %w", err)
	}
	if e, ok := replies[1].(redis.Error); ok {
		return fmt.Errorf("CLIENT SETNAME for the restart guard: %w", e)
	}
	id := runID(info)
	if id == "" {
		return errors.New("INFO server has no run_id for the restart guard")
	}
	n.saw(id, t.clock.now(), t.exclusion())
	return nil
}

// runID returns the run_id field of an INFO reply, or "".
func runID(info string) string {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "run_id:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// exclusion is how long a restarted node stays out of quorums: the longest
// TTL this Locker has asked for, plus its drift allowance, so that every
// lock it may have held before the restart has expired.
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

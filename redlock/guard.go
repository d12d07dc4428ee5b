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
	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// clientName marks the connections the restart guard has already checked.
// A connection without it is new: it was dialled after the last check, so
// it may lead to a node that restarted.
const clientName = "lockzoo-redlock"

// node is one Redis master and what the restart guard remembers of it.
type node struct {
	index int
	pipe  *redisconn.Pipeline // the node's connections (its Pool), shared by concurrent calls
	br    breaker
	owed  owed // releases that could not reach the node yet
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

// exchange runs one command on l's node and returns its reply (an error
// reply is returned as the error). With the restart guard on, CLIENT
// GETNAME travels right before it on the same connection
// (Pipeline.DoTwo), so a known connection still costs one round trip; on
// a new connection (no lockzoo name yet) the guard spends one more round
// trip to read the node's run_id and name the connection (see learn).
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
	case []byte: // compared without making a string of it
		known = string(v) == clientName
	case nil:
		if name.Err != nil {
			return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): %w", name.Err)
		}
	default:
		return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): unexpected reply %T", v)
	}
	if !known {
		if err := t.learn(ctx, l); err != nil {
			return nil, ranError{err}
		}
	}
	return r.Value, r.Err
}

// ranError is a failure of the restart guard's check of a new connection
// (learn), which comes after the command itself ran there: the command's
// reply came with GETNAME's. It is the check's failure in every way but
// one: it never reads as redisconn.ErrNotSent (a check that could not be
// sent), since the command was sent, so that an acquire that failed so
// is taken back like one that lost its reply (acquireVote).
type ranError struct{ err error }

func (e ranError) Error() string {
	return "the command ran, but the restart guard's check of its new connection failed: " + e.err.Error()
}

// Is reports whether the check's failure is target, unless target is
// redisconn.ErrNotSent.
func (e ranError) Is(target error) bool {
	return target != redisconn.ErrNotSent && errors.Is(e.err, target)
}

// learn checks a new connection: one pipelined round trip reads the
// server's run_id (INFO server) and names the connection, then the node's
// remembered run_id is compared and updated (node.saw). Other callers may
// share the connection: when several find it new at once, each learns,
// which is redundant but harmless. When the connection failed meanwhile,
// learn reads a newer one, whose server is the same or restarted since:
// either way a restart that came before the command is seen.
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

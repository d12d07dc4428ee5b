// Package restartguard notices a Redis server that restarted (its run_id
// changed) and so may have forgotten its locks, and leaves it out of
// quorums for a while. See docs/redlock.md, "Restart guard".
package restartguard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// ClientName marks the connections the guard has checked; a connection
// without it is new and may lead to a restarted server.
const ClientName = "lockzoo-redlock"

// Sender sends two commands one right after the other on one connection.
type Sender interface {
	SendTwo(ctx context.Context, first, second redisconn.Command) (redisconn.Reply, redisconn.Reply, error)
}

// Guard is one client's restart guard over its servers (Node).
type Guard struct {
	origin  time.Time
	getname redisconn.Command    // built once; read-only
	hold    func() time.Duration // how long a restarted server stays out
}

// New returns a Guard that leaves a restarted server out for hold().
func New(hold func() time.Duration) *Guard {
	return &Guard{origin: time.Now(), getname: redisconn.Command{Name: "CLIENT", Args: []any{"GETNAME"}}, hold: hold}
}

// Node is what the guard remembers of one server. Its zero value has seen
// nothing.
type Node struct {
	mu    sync.Mutex // guards runID
	runID string     // "" before the first check
	// excludedUntil is when the server counts again, in ns since the
	// Guard's origin; 0 when never excluded.
	excludedUntil atomic.Int64
}

func (g *Guard) now() int64 { return int64(time.Since(g.origin)) }

// Excluded reports whether n is left out of quorums now.
func (g *Guard) Excluded(n *Node) bool { return g.now() < n.excludedUntil.Load() }

// saw records the run_id a new connection found on n; when it changed, the
// server restarted and is excluded until now+hold. It reports a restart.
func (n *Node) saw(runID string, now int64, hold time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	restarted := n.runID != "" && n.runID != runID
	n.runID = runID
	if until := now + int64(hold); restarted && until > n.excludedUntil.Load() {
		n.excludedUntil.Store(until)
	}
	return restarted
}

// Exchange runs cmd on n's server over s, with CLIENT GETNAME right before
// it on the same connection, so a known connection costs one round trip; a
// new one costs one more (learn). It returns the command's reply, or the
// failure of the exchange or of the check (a RanError after the command).
func (g *Guard) Exchange(ctx context.Context, s Sender, n *Node, cmd string, args []any) (any, error) {
	name, r, err := s.SendTwo(ctx, g.getname, redisconn.Command{Name: cmd, Args: args})
	if err != nil {
		return nil, err
	}
	var known bool
	switch v := name.Value.(type) {
	case []byte:
		known = string(v) == ClientName // compared without a string
	case nil:
		err = name.Err
	default:
		err = fmt.Errorf("unexpected reply %T", v)
	}
	if err != nil {
		return nil, fmt.Errorf("CLIENT GETNAME for the restart guard (Config.DisableRestartGuard switches it off): %w", err)
	}
	if !known {
		if err := g.learn(ctx, s, n); err != nil {
			return nil, RanError{err}
		}
	}
	return r.Value, r.Err
}

// RanError is a failed check of a new connection (learn) after the
// command ran there. It never reads as redisconn.ErrNotSent, so an acquire
// that failed so is taken back like one that lost its reply.
type RanError struct{ Err error }

func (e RanError) Error() string {
	return "the command ran, but the restart guard's check of its new connection failed: " + e.Err.Error()
}

// Is reports whether the check's failure is target, unless target is
// redisconn.ErrNotSent.
func (e RanError) Is(target error) bool {
	return target != redisconn.ErrNotSent && errors.Is(e.Err, target)
}

// learn checks a new connection in one round trip: it reads the server's
// run_id (INFO server), names the connection, and updates n (saw).
// Concurrent callers may each learn: redundant but harmless.
func (g *Guard) learn(ctx context.Context, s Sender, n *Node) error {
	info, named, err := s.SendTwo(ctx, redisconn.Command{Name: "INFO", Args: []any{"server"}}, redisconn.Command{Name: "CLIENT", Args: []any{"SETNAME", ClientName}})
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
	n.saw(id, g.now(), g.hold())
	return nil
}

// runID returns the run_id field of an INFO reply, or "".
func runID(info string) string { return strings.TrimSpace(redisinfo.Fields(info)["run_id"]) }

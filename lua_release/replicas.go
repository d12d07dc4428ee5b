package luarelease

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// replicaWait is how a Locker waits for its replicas (Config.Replicas,
// ReplicaTimeout, WaitAOF); the zero value waits for none.
//
// Where the wait goes: on the connection that wrote the lock, right after
// the script's reply, and on a connection of the call's own, not on the
// Pipeline that the Locker's other scripts share. WAIT counts the
// replicas that acknowledged the replication offset of the calling
// connection's own last write (c->woff in Redis), not the primary's
// latest: a WAIT on a connection that wrote nothing since returns at once
// having waited for nothing, even while every replica is frozen (checked
// against Redis 7.0), so it cannot go on another connection. And WAIT
// blocks the connection it is on until the acknowledgement or the
// timeout: on the shared Pipeline every script queued behind it would
// wait too, one acknowledgement round after another, and a frozen replica
// would stall every call of the Locker for ReplicaTimeout. On a
// connection of its own each call waits alone, concurrent calls wait
// together (the primary asks its replicas for their offsets once per
// event loop for every client blocked in WAIT), and a refused attempt
// sends no WAIT at all.
type replicaWait struct {
	n       int           // Config.Replicas
	timeout time.Duration // Config.ReplicaTimeout
	aof     bool          // Config.WaitAOF
	// hasAOF caches whether the server knows WAITAOF: 0 not asked yet,
	// 1 it does, 2 it does not.
	hasAOF atomic.Int32
}

// on reports whether any wait is asked for.
func (w *replicaWait) on() bool { return w != nil && (w.n > 0 || w.aof) }

// waitAOF states of replicaWait.hasAOF.
const (
	aofUnknown = iota
	aofKnown
	aofMissing
)

// errNoWaitAOF is the failure of a Config.WaitAOF Locker on a server
// without WAITAOF; it wraps strategy.ErrInvalidConfig (Lock ends at once)
// and strategy.ErrUnsupported.
var errNoWaitAOF = fmt.Errorf("%w: WaitAOF: %w: the server has no WAITAOF command (Redis 7.2 or later, or Valkey, has it); set WaitAOF false",
	strategy.ErrInvalidConfig, strategy.ErrUnsupported)

// checkAOF makes sure, once per Locker, that the server behind c knows
// WAITAOF when the Config asks for it (COMMAND INFO replies a nil entry
// for an unknown command), before anything is written.
func (w *replicaWait) checkAOF(ctx context.Context, c redis.Conn) error {
	if !w.aof {
		return nil
	}
	switch w.hasAOF.Load() {
	case aofKnown:
		return nil
	case aofMissing:
		return errNoWaitAOF
	}
	info, err := redis.Values(redisconn.DoContext(ctx, c, "COMMAND", "INFO", "WAITAOF"))
	if err != nil {
		return fmt.Errorf("look for WAITAOF: %w", err)
	}
	if len(info) == 0 || info[0] == nil {
		w.hasAOF.Store(aofMissing)
		return errNoWaitAOF
	}
	w.hasAOF.Store(aofKnown)
	return nil
}

// acknowledged waits, on c, for the replicas to acknowledge what c
// wrote last: WAIT n, then with WaitAOF WAITAOF 1 n, within timeout in all
// (less when ctx's deadline comes sooner). It returns nil when enough
// did, an error wrapping strategy.ErrNotReplicated when too few did in
// time, and the failure otherwise (a WAITAOF refused: appendonly off).
func (w *replicaWait) acknowledged(ctx context.Context, c redis.Conn) error {
	end := time.Now().Add(w.timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-waitMargin).Before(end) {
		end = dl.Add(-waitMargin) // the reply must come before ctx ends
	}
	if w.n > 0 {
		ms, ok := msUntil(end)
		if !ok {
			return fmt.Errorf("%w: no time left to wait for %d replicas", strategy.ErrNotReplicated, w.n)
		}
		got, err := redis.Int(redisconn.DoContext(ctx, c, "WAIT", w.n, ms))
		switch {
		case err != nil:
			return fmt.Errorf("wait for replicas: %w", err)
		case got < w.n:
			return fmt.Errorf("%w: %d of %d replicas acknowledged within %v", strategy.ErrNotReplicated, got, w.n, time.Duration(ms)*time.Millisecond)
		}
	}
	if !w.aof {
		return nil
	}
	ms, ok := msUntil(end)
	if !ok {
		return fmt.Errorf("%w: no time left to wait for the append-only files", strategy.ErrNotReplicated)
	}
	counts, err := redis.Ints(redisconn.DoContext(ctx, c, "WAITAOF", 1, w.n, ms))
	var refused redis.Error
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%w: WaitAOF: the server refused WAITAOF (%v)", strategy.ErrInvalidConfig, refused)
	case err != nil:
		return fmt.Errorf("wait for the append-only files: %w", err)
	case len(counts) != 2:
		return fmt.Errorf("WAITAOF: unexpected reply %v", counts)
	case counts[0] < 1 || counts[1] < w.n:
		return fmt.Errorf("%w: WAITAOF: the primary (%d of 1) and %d of %d replicas wrote it to their append-only files within %v",
			strategy.ErrNotReplicated, counts[0], counts[1], w.n, time.Duration(ms)*time.Millisecond)
	}
	return nil
}

// waitMargin is kept between a wait's timeout and ctx's deadline, so that
// the server's reply arrives before the connection's read deadline.
const waitMargin = 2 * time.Millisecond

// msUntil returns the whole milliseconds left until end, at least 1 (a
// WAIT timeout of 0 would wait for ever), and false when none is left.
func msUntil(end time.Time) (int64, bool) {
	ms := time.Until(end).Milliseconds()
	return ms, ms >= 1
}

// takeBackTimeout bounds the take-back of a lock the replicas did not
// acknowledge.
const takeBackTimeout = time.Second

// takeBack releases, on c, the lock of keys (the release script's keys)
// that holds value, after the replicas did not acknowledge it: the
// owner-checked release, which passes it on to the next waiter in line.
// It runs on a fresh context bounded by takeBackTimeout (the wait may have
// used up ctx, and a clean-up must not be cut short by the caller), as the
// engine's clean-ups do. why is the wait's failure; the error wraps it,
// and the release's failure when the lock may still be held (the engine
// then takes the attempt back again in the background).
func (t *technique) takeBack(ctx context.Context, c redis.Conn, keys []any, value string, why error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeBackTimeout)
	defer cancel()
	args := append(append(make([]any, 0, len(keys)+1), keys...), value)
	if _, err := redisconn.EvalOn(ctx, c, t.release.Redis(), args...); err != nil {
		return fmt.Errorf("%w (and taking the lock back failed: %w)", why, err)
	}
	return fmt.Errorf("%w; the lock was taken back", why)
}

// acquireReplicated is Acquire for a Locker that waits for its replicas:
// the acquire script, and when it took the lock (or found it handed to
// the waiter, which the script then writes again so that this
// connection's WAIT covers the hand-off), the wait, all on one connection
// of the call's own. A lock the replicas did not acknowledge is taken
// back on the same connection, and the error wraps
// strategy.ErrNotReplicated.
func (t *technique) acquireReplicated(ctx context.Context, a engine.Attempt, args []any) (g engine.Acquired, err error) {
	err = redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		if err := t.wait.checkAOF(ctx, c); err != nil {
			return err
		}
		reply, err := redisconn.EvalOn(ctx, c, t.acquire.Redis(), args[2:]...)
		if err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		if g, err = t.acquired(a, args, reply, nil); err != nil {
			return err
		}
		if err := t.wait.acknowledged(ctx, c); err != nil {
			value := g.Value
			if value == "" {
				value = a.Token
			}
			g = engine.Acquired{}
			return t.takeBack(ctx, c, args[2:6], value, err)
		}
		return nil
	})
	return g, err
}

// extendReplicated is Extend for a Locker that waits for its replicas:
// the compare-and-PEXPIRE, then the wait, on one connection. An extension
// the replicas did not acknowledge is not undone (the replicas keep the
// lock's earlier expiry, which the lease's Deadline still honours): the
// error wraps strategy.ErrNotReplicated and the engine leaves the
// Deadline where it was.
func (t *technique) extendReplicated(ctx context.Context, h engine.Held, ttl time.Duration) error {
	return redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		if err := t.wait.checkAOF(ctx, c); err != nil {
			return err
		}
		if err := t.owned(redisconn.EvalOn(ctx, c, t.extend, h.Key, h.Value, ttl.Milliseconds())); err != nil {
			return err
		}
		return t.wait.acknowledged(ctx, c)
	})
}

// handOffReplicated runs the hand-off's release script (args) and, when
// it handed the lock to the waiter (a {fence} reply), waits for the
// replicas, on one connection. It returns the script's reply, and ack,
// the wait's failure (nil when acknowledged or when nothing was handed).
func (t *technique) handOffReplicated(ctx context.Context, args []any) (reply any, ack, err error) {
	err = redisconn.WithConn(ctx, t.pool, func(c redis.Conn) error {
		var err error
		if reply, err = redisconn.EvalOn(ctx, c, t.release.Redis(), args[2:]...); err != nil {
			return err
		}
		if r, ok := reply.([]any); ok && len(r) == 1 {
			ack = t.wait.acknowledged(ctx, c)
		}
		return nil
	})
	return reply, ack, err
}

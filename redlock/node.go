package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/breaker"
	"github.com/lockzoo/lockzoo/internal/owed"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/restartguard"
)

// node is one Redis master.
type node struct {
	index        int
	pipe         *redisconn.Pipeline
	br           breaker.Breaker
	owed         owed.Queue
	acquirePoint string // fault points tests gate: pointAcquireOn(index)
	releasePoint string // and pointReleaseOn(index)
	rg           restartguard.Node
}

// link is one call's way to its node; lost records that an exchange got
// no reply (the breaker counts it). One goroutine uses it at a time.
type link struct {
	n    *node
	lost bool
}

// SendTwo runs first and second back to back on one connection.
func (l *link) SendTwo(ctx context.Context, first, second redisconn.Command) (redisconn.Reply, redisconn.Reply, error) {
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

// call runs op on n over a new link, for a call that may follow, and tells
// n's breaker whether the node replied (probe: what Admit said). A panic
// is the node's failure, one that may hold the lock.
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

// exchange runs one command on l's node, bounded by ctx (an error reply
// is a redis.Error); with the restart guard on, through it.
func (t *technique) exchange(ctx context.Context, l *link, cmd string, args []any) (any, error) {
	if t.guard {
		return t.rg.Exchange(ctx, l, &l.n.rg, cmd, args)
	}
	reply, err := l.n.pipe.Do(ctx, cmd, args)
	l.note(err)
	return reply, err
}

// excluded reports whether the restart guard leaves n out of quorums now.
func (t *technique) excluded(n *node) bool { return t.guard && t.rg.Excluded(&n.rg) }

// exclusion is how long a restarted node stays out of quorums: the
// longest TTL this Locker used, plus its drift allowance.
func (t *technique) exclusion() time.Duration {
	ttl := time.Duration(t.maxTTL.Load())
	return ttl + t.cfg.driftFor(ttl)
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

package redlock

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// link is one call's way to its node: every exchange of the call goes
// through the node's pipeline (redisconn.Pipeline), so that the commands of
// concurrent calls share a connection, and lost records that one of them
// got no reply (the connection failed, or the deadline passed), which
// the breaker counts against the node. A link is used by one goroutine at
// a time.
type link struct {
	n    *node
	lost bool
}

// send runs cmd with args on the node, bounded by ctx, and returns its
// reply, an error reply as its redis.Error. A failure without a reply
// marks the link lost.
func (l *link) send(ctx context.Context, cmd string, args []any) (any, error) {
	reply, err := l.n.pipe.Do(ctx, cmd, args)
	l.note(err)
	return reply, err
}

// sendTwo runs first and second on the node one right after the other on
// one connection (redisconn.Pipeline.DoTwo), bounded by ctx. A failure
// without the replies marks the link lost.
func (l *link) sendTwo(ctx context.Context, first, second redisconn.Command) (redisconn.Reply, redisconn.Reply, error) {
	r1, r2, err := l.n.pipe.DoTwo(ctx, first, second)
	l.note(err)
	return r1, r2, err
}

// note marks the link lost when err is a failure without a reply (an
// error reply is a reply).
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

// call runs op on n over a new link, then tells n's breaker whether the
// node replied: it did unless an exchange of op lost its reply (an error
// reply, or a fault injected before anything was sent, counts as
// replied). It returns the link, for a call that follows on the same
// node. probe is what n.br.admit said.
//
// The pipeline turns a panic in the pool or the connection (a Pool of the
// user's) into an error wrapping redisconn.ErrPanicked; a panic that still
// reaches call becomes the node's failure too, an answer saying that the
// node may hold the lock, since the request may have been sent.
func (t *technique) call(ctx context.Context, n *node, probe bool, op nodeOp) (l *link, a answer) {
	l = &link{n: n}
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("%w: %v", redisconn.ErrPanicked, v)
			l.lost = true
			n.br.settle(probe, false, err)
			a = answer{node: n.index, vote: voteFailed, err: err, mayHold: true}
		}
	}()
	a = op(ctx, l)
	a.node = n.index
	n.br.settle(probe, !l.lost, a.err)
	return l, a
}

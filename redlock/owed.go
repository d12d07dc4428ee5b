package redlock

import (
	"context"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// plainRelease, as the release script's second argument, deletes the lock
// and tells the head without handing it on: an owed release paid late may
// find a head that is gone.
const plainRelease = "-"

// requeued names the waiter an owed undo puts back in rkey's line.
type requeued struct{ rkey, waiter, member string }

// owe records that n is owed the release of token at keys, with requeue
// (see releaseOn) or as a plainRelease.
func (t *technique) owe(n *node, keys []any, token string, requeue ...any) {
	if len(requeue) == 0 {
		requeue = []any{plainRelease}
	}
	kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
	t.oweCall(n, t.release, append(kv, requeue...), nil)
}

// oweCall records that n is owed script with kv (read-only) until the
// longest TTL from now (owed.Payer). Each send goes through n's breaker.
// For a waiter's undo (q), a waiter that left since leaves again once it
// is paid (requeueOn).
func (t *technique) oweCall(n *node, script *redisconn.Script, kv []any, q *requeued) {
	pay := func(ctx context.Context) (sent, lost bool) {
		ok, probe := n.br.Admit()
		if !ok {
			return false, false
		}
		l, _ := t.call(ctx, n, probe, func(ctx context.Context, l *link) answer {
			a := compareVote(t.evalArgs(ctx, l, script, kv))
			if q != nil && !l.lost && t.left.Has(q.waiter) {
				t.leaveOp(q.rkey, q.waiter, q.member)(ctx, l) // it gave up since
			}
			return a
		})
		return true, l.lost
	}
	t.payer.Owe(&n.owed, pay, time.Now().Add(time.Duration(t.maxTTL.Load())))
}

package redlock

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

const (
	// maxOwed bounds the calls a node is owed; beyond it they are dropped
	// and their locks expire at their TTL.
	maxOwed = 1024
	// owedTries bounds the sends of an owed call that loses its reply.
	owedTries = 5
	// plainRelease, as the release script's second argument, deletes the
	// lock and tells the head without handing it on: an owed release paid
	// late may find a head that is gone.
	plainRelease = "-"
)

// owed is the calls a node is owed: releases (or a gave-up waiter's leave)
// the breaker skipped or whose reply was lost, which would otherwise leave
// a lock until its TTL. One payer goroutine per node at a time (pay) sends
// them as soon as the breaker lets a call through; every release checks
// the owner, so a late one is harmless.
type owed struct {
	mu     sync.Mutex
	due    []owedRelease
	paying bool
}

// owedRelease is one owed call: a script's arguments (read-only), how many
// sends lost their reply, and when its lock has expired anyway.
type owedRelease struct {
	kv     []any
	script *redisconn.Script // nil: t.release
	tries  int
	until  time.Time
	// requeued is set for a waiter's undo: once paid, a waiter that left
	// since leaves again (requeueOn).
	requeued *requeued
}

// requeued names the waiter an owed undo puts back in rkey's line.
type requeued struct{ rkey, waiter, member string }

// owe records that n is owed the release of token at keys, with requeue
// (see releaseOn) or as a plainRelease.
func (t *technique) owe(n *node, keys []any, token string, requeue ...any) {
	if len(requeue) == 0 {
		requeue = []any{plainRelease}
	}
	kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
	t.oweCall(n, owedRelease{kv: append(kv, requeue...)})
}

// oweCall records that n is owed o until the longest TTL from now, and
// starts n's payer unless one runs.
func (t *technique) oweCall(n *node, o owedRelease) {
	o.until = time.Now().Add(time.Duration(t.maxTTL.Load()))
	n.owed.mu.Lock()
	if len(n.owed.due) < maxOwed {
		n.owed.due = append(n.owed.due, o)
	}
	start := !n.owed.paying
	n.owed.paying = true
	n.owed.mu.Unlock()
	if start {
		t.bg.Add(1)
		go t.pay(n) // ends when n is owed nothing, see pay
	}
}

// pay is n's payer: it sends n's owed calls in order, waiting between
// passes from 5 ms doubling up to NodeTimeout. It ends when n is owed
// nothing, or drops what is left once nothing was paid for twice
// NodeTimeout (a frozen node). Once the Locker closes it makes one last
// pass, none to a suspect node, so it ends within Close's bound.
func (t *technique) pay(n *node) {
	defer t.bg.Done()
	wait := 5 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	progress := time.Now()
	for {
		n.owed.mu.Lock()
		due := n.owed.due
		n.owed.due = nil
		if len(due) == 0 {
			n.owed.paying = false
			n.owed.mu.Unlock()
			return
		}
		n.owed.mu.Unlock()
		if t.isClosing() {
			if !n.br.Suspect() {
				t.payOnce(n, due)
			}
			continue
		}
		unpaid := t.payOnce(n, due)
		if len(unpaid) < len(due) {
			progress = time.Now()
		} else if time.Since(progress) > 2*t.s.nodeTimeout {
			unpaid = nil // the node stays suspect: drop what is left
		}
		n.owed.mu.Lock()
		n.owed.due = append(unpaid, n.owed.due...)
		n.owed.mu.Unlock()
		if len(unpaid) == 0 {
			wait = 5 * time.Millisecond
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-t.closing: // the last pass, above
		}
		wait = min(2*wait, t.s.nodeTimeout)
	}
}

// isClosing reports whether the Locker is closing.
func (t *technique) isClosing() bool {
	select {
	case <-t.closing:
		return true
	default:
		return false
	}
}

// payOnce sends each call in due that has not expired, each over a call of
// its own so the breaker counts it, while the breaker lets calls through
// and the node replies. It returns those still owed: the ones not sent,
// and the one that lost its reply unless that was its owedTries-th time.
func (t *technique) payOnce(n *node, due []owedRelease) []owedRelease {
	var unpaid []owedRelease
	now := time.Now()
	for i, o := range due {
		if now.After(o.until) {
			continue
		}
		ok, probe := n.br.Admit()
		if !ok {
			return append(unpaid, due[i:]...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), t.s.nodeTimeout)
		script := cmp.Or(o.script, t.release)
		l, _ := t.call(ctx, n, probe, func(ctx context.Context, l *link) answer {
			a := compareVote(t.evalArgs(ctx, l, script, o.kv))
			if q := o.requeued; q != nil && !l.lost && t.left.Has(q.waiter) {
				t.leaveOp(q.rkey, q.waiter, q.member)(ctx, l) // it gave up since
			}
			return a
		})
		cancel()
		if l.lost {
			if o.tries++; o.tries < owedTries {
				unpaid = append(unpaid, o)
			}
			return append(unpaid, due[i+1:]...)
		}
	}
	return unpaid
}

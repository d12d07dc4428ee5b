package redlock

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// maxOwed is how many releases a node can be owed at most; a release owed
// beyond it is dropped, and its lock expires at its TTL.
const maxOwed = 1024

// owedTries is how many times an owed release is sent at most while the
// node fails without a reply.
const owedTries = 5

// owed is the releases a node is owed: the owner-checked release of a lock
// that may be left on the node, which was never sent (the node's breaker
// skipped it while it was suspect) or lost its reply (a killed
// connection, say; the pool then lends the dead connections beside it).
// Left alone, such a lock would stay until its TTL, and with one more
// node failing it keeps every quorum for its key from forming. One payer
// goroutine per node at a time (pay) sends them as soon as the breaker
// lets a call through. Every release checks the owner, so a late one is
// harmless: it deletes only a lock that still holds its token.
type owed struct {
	mu     sync.Mutex
	due    []owedRelease
	paying bool // a payer runs
}

// owedRelease is one owed call: the release script's arguments
// (read-only), or another script's (a waiter's leave, oweLeave), how many
// sends lost their reply, and when its lock has expired anyway.
type owedRelease struct {
	kv     []any
	script *redisconn.Script // nil: t.release
	tries  int
	until  time.Time
	// requeued is set for the undo of a waiter's attempt, which puts the
	// waiter back in line: once paid, a waiter that has left since leaves
	// again (requeueOn).
	requeued *requeued
}

// requeued names the waiter an owed undo puts back in rkey's line.
type requeued struct{ rkey, waiter, member string }

// plainRelease, as the release script's second argument, asks for the
// delete and the head's notice without a hand-off.
const plainRelease = "-"

// owe records that n is owed the release of token at keys (keysOf), and
// starts n's payer unless one runs.
func (t *technique) owe(n *node, keys []any, token string, requeue ...any) {
	if len(requeue) == 0 {
		// Paid late, maybe as the Locker closes, when the head of the
		// line may be a waiter that is gone: the lock is deleted and the
		// head told, never handed to it (release.lua).
		requeue = []any{plainRelease}
	}
	kv := append(append(t.release.Args(5+len(requeue)), keys...), token)
	kv = append(kv, requeue...)
	t.oweCall(n, owedRelease{kv: kv})
}

// oweCall records that n is owed o, to expire the longest TTL from now,
// and starts n's payer unless one runs. The payer sends what a node is
// owed in the order it was owed.
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
		t.bg.add(1)
		go t.pay(n) // ends when n is owed nothing, see pay
	}
}

// pay is n's payer: it sends n's owed releases, each over a call of its
// own (so the breaker counts its outcome) and only when the breaker lets
// it through; a release that lost its reply again is owed again, until
// owedTries. Between passes that left releases owed it waits, from 5 ms
// doubling up to NodeTimeout. It ends when n is owed nothing, or drops
// what is left and ends once no release was paid for twice NodeTimeout
// (a frozen node: its locks expire at their TTL, as they would have), so
// that Wait, which waits for it, returns within about twice NodeTimeout
// after the last owed release; once the Locker closes, it makes one last
// pass, none to a suspect node, and ends within NodeTimeout, inside
// Close's bound.
func (t *technique) pay(n *node) {
	defer t.bg.done()
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
			// One last pass, unless the node is suspect (its probe could
			// outlast Close's bound): what is left is dropped.
			if !n.br.suspect.Load() {
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

// payOnce sends each release in due that has not expired while the
// breaker lets calls through to n and the node replies, and returns those
// still owed: the ones it did not send, and the one that lost its reply,
// unless that was its owedTries-th time.
func (t *technique) payOnce(n *node, due []owedRelease) []owedRelease {
	var unpaid []owedRelease
	now := time.Now()
	for i, o := range due {
		if now.After(o.until) {
			continue
		}
		ok, probe := n.br.admit()
		if !ok {
			return append(unpaid, due[i:]...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), t.s.nodeTimeout)
		script := cmp.Or(o.script, t.release)
		l, _ := t.call(ctx, n, probe, func(ctx context.Context, l *link) answer {
			a := compareVote(t.evalArgs(ctx, l, script, o.kv))
			if q := o.requeued; q != nil && !l.lost && t.left.has(q.waiter) {
				// The waiter gave up: it leaves the line this undo put it
				// back in.
				t.leaveOp(q.rkey, q.waiter, q.member)(ctx, l)
			}
			return a
		})
		cancel()
		if l.lost {
			// The node failed again: the rest waits for the next pass.
			if o.tries++; o.tries < owedTries {
				unpaid = append(unpaid, o)
			}
			return append(unpaid, due[i+1:]...)
		}
	}
	return unpaid
}

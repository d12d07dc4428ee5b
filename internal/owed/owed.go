// Package owed keeps the calls a node is owed (a release whose reply was
// lost, one the node's breaker skipped) and pays them in the background,
// in order, as soon as the node answers again.
package owed

import (
	"context"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/background"
)

const (
	// maxDue bounds the calls a node is owed; beyond it they are dropped
	// (a lock then expires at its TTL).
	maxDue = 1024
	// tries bounds the sends of an owed call that loses its reply.
	tries = 5
	// firstWait is the payer's first wait between passes.
	firstWait = 5 * time.Millisecond
)

// Call sends one owed call, bounded by ctx. It reports sent false when
// nothing was sent (the node's breaker turned it away), and lost when it
// was sent and lost its reply.
type Call func(ctx context.Context) (sent, lost bool)

// Payer is what every node's Queue shares: Timeout bounds each call and
// the wait between passes, Closing is closed when the owner closes, and BG
// tracks the payer goroutines.
type Payer struct {
	Timeout time.Duration
	Closing <-chan struct{}
	BG      *background.Tracker
}

// Queue is one node's owed calls; its zero value is empty. Suspect, when
// set, reports whether the node's last call failed without a reply.
type Queue struct {
	Suspect func() bool
	mu      sync.Mutex
	due     []due
	paying  bool
}

type due struct {
	call  Call
	tries int
	until time.Time // when what it cleans up has expired anyway
}

// Owe records that q's node is owed c until until, and starts q's payer
// unless one runs. The payer ends when q is owed nothing.
func (p *Payer) Owe(q *Queue, c Call, until time.Time) {
	q.mu.Lock()
	if len(q.due) < maxDue {
		q.due = append(q.due, due{call: c, until: until})
	}
	start := !q.paying
	q.paying = true
	q.mu.Unlock()
	if start {
		p.BG.Add(1)
		go p.pay(q)
	}
}

// pay is q's payer: it sends q's calls in order, waiting between passes
// from firstWait doubling up to Timeout. It ends when q is owed nothing,
// or drops what is left once nothing was paid for twice Timeout (a frozen
// node). Once closing, it makes one last pass, none to a suspect node, so
// it ends within the owner's Close bound.
func (p *Payer) pay(q *Queue) {
	defer p.BG.Done()
	wait := firstWait
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	progress := time.Now()
	for {
		q.mu.Lock()
		list := q.due
		q.due = nil
		if len(list) == 0 {
			q.paying = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		if p.closing() {
			if q.Suspect == nil || !q.Suspect() {
				p.payOnce(list)
			}
			continue
		}
		unpaid := p.payOnce(list)
		if len(unpaid) < len(list) {
			progress = time.Now()
		} else if time.Since(progress) > 2*p.Timeout {
			unpaid = nil // the node stays suspect: drop what is left
		}
		q.mu.Lock()
		q.due = append(unpaid, q.due...)
		q.mu.Unlock()
		if len(unpaid) == 0 {
			wait = firstWait
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-p.Closing: // the last pass, above
		}
		wait = min(2*wait, p.Timeout)
	}
}

func (p *Payer) closing() bool {
	select {
	case <-p.Closing:
		return true
	default:
		return false
	}
}

// payOnce sends each call in list that has not expired, until one is not
// sent or loses its reply. It returns those still owed: the ones not sent,
// and the one that lost its reply unless that was its last try.
func (p *Payer) payOnce(list []due) []due {
	var unpaid []due
	now := time.Now()
	for i, d := range list {
		if now.After(d.until) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.Timeout)
		sent, lost := d.call(ctx)
		cancel()
		if !sent {
			return append(unpaid, list[i:]...)
		}
		if lost {
			if d.tries++; d.tries < tries {
				unpaid = append(unpaid, d)
			}
			return append(unpaid, list[i+1:]...)
		}
	}
	return unpaid
}

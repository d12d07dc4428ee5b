package redlock_test

import (
	"context"
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestObserverLocalHandOff: redlock.Config's embedded strategy.Config
// carries the Observer. A holds "k" and B, a goroutine of the same Locker,
// is queued for it; A's Unlock passes the lock to B in one round. The
// observer hears A's Released, passed on, and B's HandedOff, local, then
// B's Acquired, handed off, with B's token and fence.
func TestObserverLocalHandOff(t *testing.T) {
	nodes := startNodes(t, 3)
	rec := &locktest.Recorder{}
	cfg := passConfig()
	cfg.Observer = rec
	l := newLocker(t, nodes, cfg)
	a := mustHoldAll(t, nodes, l, "k")
	done := lockUntilCleanup(t, l, "k")
	waitQueued(t, nodes, 1, l.Config().Quorum)
	b := handOver(t, a, done)
	defer func() {
		if err := b.Unlock(context.Background()); err != nil {
			t.Errorf("B's Unlock() = %v, want nil", err)
		}
	}()

	var aReleased, bHanded, bAcquired []locktest.Event
	for _, e := range rec.Events() {
		switch {
		case e.Kind == locktest.KindReleased && e.Released.Token == a.Token():
			aReleased = append(aReleased, e)
		case e.Kind == locktest.KindHandedOff:
			bHanded = append(bHanded, e)
		case e.Kind == locktest.KindAcquired && e.Acquired.Token == b.Token():
			bAcquired = append(bAcquired, e)
		}
	}
	if len(aReleased) != 1 || len(bHanded) != 1 || len(bAcquired) != 1 {
		t.Fatalf("events = %q, want one Released of A, one HandedOff and one Acquired of B", locktest.Kinds(rec.Events()))
	}
	if r := aReleased[0].Released; !r.PassedOn || r.NotHeld || r.Technique != "redlock" {
		t.Errorf("A's Released = %+v, want redlock, passed on, held", r)
	}
	if h := bHanded[0].HandedOff; !h.Local || h.Token != b.Token() || h.Fence != b.Fence() || h.Attempts < 1 {
		t.Errorf("B's HandedOff = %+v, want local, Token %q, Fence %d, >= 1 attempt", h, b.Token(), b.Fence())
	}
	if got := bAcquired[0].Acquired; !got.HandedOff || got.Op != strategy.OpLock || got.Fence != b.Fence() {
		t.Errorf("B's Acquired = %+v, want handed off, Op %q, Fence %d", got, strategy.OpLock, b.Fence())
	}
}

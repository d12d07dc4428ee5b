package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestKeepPlaceBound: a waiter that listens for notices (its subscription
// confirmed on a real node) and is refused every time sleeps between
// attempts for the line's keep-place bound: WithListened's longer one
// only when the refusal says the line saw its Locker listening
// (BusyError.Listened), WithLine's stale/2 otherwise (a Locker that
// listens on another node of a Redis Cluster, say, which the line cannot
// count). The Retry policy's hour-long wait never applies.
func TestKeepPlaceBound(t *testing.T) {
	const (
		stale    = 200 * time.Millisecond // keep-place every 100 ms
		listened = 2 * time.Second        // keep-place every 1 s
		wait     = 1200 * time.Millisecond
	)
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	attempts := map[bool]int32{}
	for _, saw := range []bool{false, true} {
		tech := &scripted{acquire: func(int) (engine.Acquired, error) {
			return engine.Acquired{}, &engine.BusyError{Key: "k", Remaining: time.Hour, Listened: saw}
		}}
		l, err := engine.New(tech, strategy.Properties{Name: "test"}, strategy.Config{Retry: strategy.Fixed(time.Hour)},
			engine.WithInboxNotices(node.Pool()), engine.WithLine(stale), engine.WithListened(listened), engine.WithNoticeWaits())
		if err != nil {
			t.Fatalf("New() = %v, want nil", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, err = l.Lock(ctx, "k")
		cancel()
		if !errors.Is(err, strategy.ErrNotAcquired) {
			t.Errorf("Lock() = %v, want %v", err, strategy.ErrNotAcquired)
		}
		if err := l.Close(); err != nil {
			t.Errorf("Close() = %v, want nil", err)
		}
		attempts[saw] = tech.attempts.Load()
	}
	t.Logf("attempts in %v: %d listened, %d not", wait, attempts[true], attempts[false])
	// Listened: the first attempt, the one right after subscribing, and
	// one after listened/2 (1 s): 3. Not: one every stale/2 (100 ms)
	// besides: about 13, fewer only on a very slow machine.
	if got := attempts[true]; got > 4 {
		t.Errorf("listened waiter made %d attempts in %v, want at most 4 (one per %v)", got, wait, listened/2)
	}
	if got, least := attempts[false], 2*attempts[true]+1; got < least {
		t.Errorf("waiter the line did not see listening made %d attempts in %v, want at least %d (one per %v; a listened one made %d)", got, wait, least, stale/2, attempts[true])
	}
}

package luarelease_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestListeningWaiterSleeps: a waiter in another Locker, with the default
// Retry (which would poll every 4 ms at most), listens for notices while
// the holder keeps the lock for 2 × LineListened; in that time it makes
// about one attempt per LineListened/2 to keep its place (the line saw
// its Locker listening), not one per LineStale/2 nor one per backoff, and
// the release still hands it the lock directly.
func TestListeningWaiterSleeps(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := newLocker(t, node.Pool(), strategy.Config{TTL: time.Minute})
	counted := bench.Count(node.Pool())
	waiter := newLocker(t, counted, strategy.Config{TTL: time.Minute})
	_, b := handOver(ctx, t, node, holder, waiter, func() {
		// The attempts before and right after subscribing are over: each
		// refused attempt asks PUBSUB NUMSUB.
		locktest.WaitCommandCalls(t, node, "pubsub|numsub", 2)
		start := time.Now()
		before := counted.Trips()
		time.Sleep(2 * luarelease.LineListened)
		got := counted.Trips() - before
		// The window is measured, not assumed: a loaded machine
		// oversleeps. Attempts at least LineListened/2 apart fit at most
		// window/(LL/2)+1 times in it; one per LineStale/2 would be 4
		// times as many, and a waiter that polls makes hundreds.
		window := time.Since(start)
		if most := int64(window/(luarelease.LineListened/2)) + 1; got > most {
			t.Errorf("waiter made %d round trips in %v while listening, want at most %d (one per LineListened/2)", got, window, most)
		}
	})
	if tok := b.Token(); strings.Contains(tok, ".") {
		t.Errorf("waiter Token() = %q, want its waiter name without \".\" (handed the lock by the release)", tok)
	}
}

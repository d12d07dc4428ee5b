package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		listened = 10 * time.Second       // keep-place every 5 s
		// The waiter the line did not see listening runs until it made
		// this many attempts; the listened one then waits as long.
		unheard = 8
	)
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	// lock runs one waiter's Lock, refused every time with saw as the
	// refusal's Listened, until ctx ends or stop returns true for the
	// attempt's number, and returns its attempts and how long it ran.
	lock := func(ctx context.Context, saw bool, stop func(n int) bool) (int, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		tech := &scripted{acquire: func(n int) (engine.Acquired, error) {
			if stop(n) {
				cancel()
			}
			return engine.Acquired{}, &engine.BusyError{Key: "k", Remaining: time.Hour, Listened: saw}
		}}
		l, err := engine.New(tech, strategy.Properties{Name: "test"}, strategy.Config{Retry: strategy.Fixed(time.Hour)},
			engine.WithInboxNotices(node.Pool()), engine.WithLine(stale), engine.WithListened(listened), engine.WithNoticeWaits())
		require.NoError(t, err, "New()")
		start := time.Now()
		_, err = l.Lock(ctx, "k")
		ran := time.Since(start)
		assert.ErrorIs(t, err, strategy.ErrNotAcquired, "Lock() (listened %v)", saw)
		assert.NoError(t, l.Close(), "Close()")
		return int(tech.attempts.Load()), ran
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	notHeard, ran := lock(ctx, false, func(n int) bool { return n >= unheard })
	require.GreaterOrEqual(t, notHeard, unheard, "attempts of the waiter the line did not see listening, which runs until it made %d", unheard)
	runCtx, cancelRun := context.WithTimeout(ctx, ran)
	defer cancelRun()
	heard, _ := lock(runCtx, true, func(int) bool { return false })
	t.Logf("attempts in %v: %d listened, %d not", ran, heard, notHeard)
	// Listened: the first attempt, the one right after subscribing, one
	// per listened/2 (5 s, longer than the run takes on any machine), and
	// one to spare. One per stale/2 would have made about as many as the
	// other waiter.
	most := 3 + int(ran/(listened/2))
	assert.LessOrEqual(t, heard, most, "attempts of the listened waiter in %v, want at most %d (one per %v)", ran, most, listened/2)
	assert.GreaterOrEqual(t, notHeard, 2*heard+1, "attempts of the waiter the line did not see listening in %v, want at least twice the listened one's (one per %v)", ran, stale/2)
}

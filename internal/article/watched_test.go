package article_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestWatchedCutShort: Watched calls whose ctx ends at every point of the
// transaction leave nothing writing on their connection when the pool
// takes it back and sends UNWATCH. Through redigo's DoContext, whose
// goroutine goes on writing after ctx ends, the race detector flagged that
// UNWATCH (CI: setnx_expire's release cut off by its bound); without -race
// the test checks only that each call succeeds or reports its ctx.
func TestWatchedCutShort(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	pool := node.Pool()
	h := engine.Held{Key: "lock:k", Value: "tok"}
	_, err := node.Do("SET", h.Key, h.Value)
	require.NoError(t, err, "SET %s", h.Key)
	for i := range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%40)*25*time.Microsecond)
		err := article.Watched(ctx, pool, h, "", false, "PEXPIRE", h.Key, 60_000)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, strategy.ErrNotHeld) {
			t.Fatalf("Watched() with a %v bound = %v, want nil or %v", time.Duration(i%40)*25*time.Microsecond, err, context.DeadlineExceeded)
		}
	}
}

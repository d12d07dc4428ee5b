package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/article"
	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// waitingPool is a Pool that never has a connection free: GetContext
// waits until ctx's Done closes, as a redigo Pool with Wait set does when
// MaxActive connections are out, and then returns ctx.Err(). stop ends
// every wait, so that no goroutine outlives the test.
type waitingPool struct {
	gets      atomic.Int32
	deadlines chan time.Duration // how far ahead each GetContext's deadline was; -1: none
	stop      chan struct{}
}

func (p *waitingPool) GetContext(ctx context.Context) (redis.Conn, error) {
	p.gets.Add(1)
	ahead := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		ahead = time.Until(dl)
	}
	select {
	case p.deadlines <- ahead:
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.stop:
		return nil, errors.New("waitingPool: stopped")
	}
}

// poolTech acquires with article.SetNXEX over its pool, and releases
// nothing (its attempts never reach Redis).
type poolTech struct{ pool strategy.Pool }

func (t poolTech) Acquire(ctx context.Context, a engine.Attempt) (engine.Acquired, error) {
	return article.SetNXEX(ctx, t.pool, a)
}

func (poolTech) Release(context.Context, engine.Held) error { return nil }

func (poolTech) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, strategy.ErrUnsupported
}

// TestAttemptBoundReachesPool: the context a Lock attempt hands the Pool
// ends at the attempt's bound (AttemptTimeout), Done included, so that a
// Pool waiting for a free connection on ctx.Done() gives the attempt up
// by then and Lock tries again, whether the caller's ctx can be cancelled
// or can never end.
func TestAttemptBoundReachesPool(t *testing.T) {
	const ttl = time.Second
	bound := engine.AttemptTimeout(ttl)
	tests := []struct {
		name   string
		parent func() (context.Context, context.CancelFunc)
	}{
		{"cancellable ctx", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
		{"ctx that never ends", func() (context.Context, context.CancelFunc) {
			return context.Background(), func() {}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := &waitingPool{deadlines: make(chan time.Duration, 1), stop: make(chan struct{})}
			l := newLocker(t, poolTech{pool}, strategy.Config{TTL: ttl, Retry: strategy.Fixed(time.Millisecond)})
			ctx, cancel := tt.parent()
			locked := make(chan error, 1)
			go func() {
				_, err := l.Lock(ctx, "k")
				locked <- err
			}()
			t.Cleanup(func() {
				cancel()
				require.NoError(t, l.Close())
				close(pool.stop)
				<-locked // Lock has returned: no goroutine outlives the test
			})

			ahead := <-pool.deadlines
			assert.True(t, ahead > 0 && ahead <= bound, "GetContext's ctx deadline %v ahead, want within the attempt bound %v", ahead, bound)
			// A second GetContext means the first gave up by its bound and
			// Lock tried again; wait for it well past the bound, with slack
			// for a slow machine.
			wait := 50 * bound
			deadline := time.Now().Add(wait)
			for pool.gets.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(bound / 10)
			}
			assert.GreaterOrEqual(t, pool.gets.Load(), int32(2),
				"GetContext calls after %v = %d, want at least 2 (a wait on ctx.Done() ends at the attempt bound %v)", wait, pool.gets.Load(), bound)
		})
	}
}

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestPipelineRepliesToEachCaller: under load the pipeline's commands
// travel in batches (fewer connections taken from the pool than commands
// sent), and every caller gets the reply to its own command.
func TestPipelineRepliesToEachCaller(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	p := engine.NewPipeline(pool)
	const callers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			for j := range each {
				want := fmt.Sprintf("%d/%d", i, j)
				got, err := redis.String(p.Do(context.Background(), "ECHO", []any{want}))
				if err != nil || got != want {
					errs <- fmt.Errorf("Do(ECHO %s) = %q, %v, want %q, nil", want, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if gets, sent := pool.Gets(), int64(callers*each); gets >= sent*9/10 {
		t.Errorf("pool connections taken = %d for %d commands, want fewer than %d (commands batched)", gets, sent, sent*9/10)
	}
}

// occupy starts a blocking command (BLPOP on its own key for block) on
// the pipeline, n times one after the other, each given time to be taken
// by a flight of its own: the first goes alone on a connection of its
// own, the later ones (the first is under way) each fill a flight. It
// returns a channel that yields each one's error once it returned.
func occupy(t *testing.T, p *engine.Pipeline, n int, block time.Duration) <-chan error {
	t.Helper()
	done := make(chan error, n)
	for i := range n {
		go func() {
			_, err := p.Do(context.Background(), "BLPOP", []any{fmt.Sprintf("blocked:%d", i), block.Seconds()})
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
	}
	return done
}

// TestPipelineCallerLeaves: a caller whose ctx ends returns at once with
// ctx's error, whether its command was still queued (it is then never
// sent) or on the wire (its reply is dropped, and every later caller gets
// its own reply, not that one).
func TestPipelineCallerLeaves(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()

	t.Run("queued", func(t *testing.T) {
		p := engine.NewPipeline(node.Pool())
		// One alone and one in each flight: the next command waits in the queue.
		blocked := occupy(t, p, engine.MaxFlights+1, time.Second)
		// Cancelled rather than timed out: a batch whose deadlines have
		// all passed is not sent either.
		leaveCtx, cancel := context.WithCancel(ctx)
		defer time.AfterFunc(100*time.Millisecond, cancel).Stop()
		_, err := p.Do(leaveCtx, "SET", []any{"queued:marker", "sent"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Do(SET) with every flight busy, ctx cancelled = %v, want context.Canceled", err)
		}
		for range engine.MaxFlights + 1 {
			if err := <-blocked; err != nil && !errors.Is(err, redis.ErrNil) {
				t.Errorf("Do(BLPOP) = %v, want nil", err)
			}
		}
		if got, err := redis.String(p.Do(ctx, "ECHO", []any{"after"})); err != nil || got != "after" {
			t.Errorf("Do(ECHO after) = %q, %v, want \"after\", nil", got, err)
		}
		if n, err := redis.Int(node.Do("EXISTS", "queued:marker")); err != nil || n != 0 {
			t.Errorf("EXISTS of the key the abandoned SET names = %d, %v, want 0 (never sent)", n, err)
		}
	})

	t.Run("on the wire", func(t *testing.T) {
		p := engine.NewPipeline(node.Pool())
		blocked := occupy(t, p, 1, time.Second) // so that the next commands go through flights
		leaveCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		reply, err := p.Do(leaveCtx, "BLPOP", []any{"wire:blocked", 0.5})
		if !errors.Is(err, context.DeadlineExceeded) || reply != nil {
			t.Errorf("Do(BLPOP 0.5 s) with a ctx of 100 ms = %v, %v, want nil, context.DeadlineExceeded", reply, err)
		}
		if took := time.Since(start); took >= 500*time.Millisecond {
			t.Errorf("Do(BLPOP 0.5 s) with a ctx of 100 ms returned after %v, want before the BLPOP ends", took)
		}
		// Behind the BLPOP on its connection, or on another one: either
		// way its own reply.
		for i := range 3 {
			want := fmt.Sprint("after-", i)
			if got, err := redis.String(p.Do(ctx, "ECHO", []any{want})); err != nil || got != want {
				t.Errorf("Do(ECHO %s) after a caller left = %q, %v, want %q, nil", want, got, err, want)
			}
		}
		if err := <-blocked; err != nil && !errors.Is(err, redis.ErrNil) {
			t.Errorf("Do(BLPOP) = %v, want nil", err)
		}
	})
}

// TestPipelineConnectionFails: when the connections under way are killed,
// every caller whose command was on them gets an error (none waits for a
// reply that cannot come), and the next command is served.
func TestPipelineConnectionFails(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	p := engine.NewPipeline(node.Pool())
	blocked := occupy(t, p, 3, 5*time.Second)
	if _, err := node.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		t.Fatalf("CLIENT KILL = %v, want nil", err)
	}
	for range 3 {
		select {
		case err := <-blocked:
			if err == nil {
				t.Errorf("Do(BLPOP) on a killed connection = nil, want an error")
			}
		case <-time.After(4 * time.Second):
			t.Fatalf("Do(BLPOP) on a killed connection still waits after 4 s, want an error at once")
		}
	}
	if got, err := redis.String(p.Do(context.Background(), "ECHO", []any{"again"})); err != nil || got != "again" {
		t.Errorf("Do(ECHO) after the kill = %q, %v, want \"again\", nil", got, err)
	}
}

// TestPipelinePanickingPool: a connection that panics fails the commands
// of its batch with an error wrapping engine.ErrPanicked; it does not
// crash the process from the flight's goroutine.
func TestPipelinePanickingPool(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	p := engine.NewPipeline(pool)
	blocked := occupy(t, p, 1, 300*time.Millisecond) // took a healthy connection
	pool.Set(locktest.PoolPanics)
	_, err := p.Do(context.Background(), "ECHO", []any{"x"})
	if !errors.Is(err, engine.ErrPanicked) {
		t.Errorf("Do(ECHO) over a panicking connection = %v, want engine.ErrPanicked", err)
	}
	if err := <-blocked; err != nil && !errors.Is(err, redis.ErrNil) {
		t.Errorf("Do(BLPOP) = %v, want nil", err)
	}
}

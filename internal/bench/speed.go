package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/scripts"
	"github.com/lockzoo/lockzoo/strategy"
)

// Speed is the outcome of an uncontended measurement.
type Speed struct {
	Workers   int           `json:"workers"`
	Ops       int           `json:"ops"`     // Lock+Unlock pairs completed
	Wall      time.Duration `json:"wall_ns"` // from the start to the last worker's end
	OpsPerSec float64       `json:"ops_per_sec"`
	// Pair is the latency of one Lock+Unlock pair.
	Pair Quantiles `json:"pair"`
}

// rawTTL is the expiry the raw ceiling sets, like a technique's default.
const rawTTL = 10 * time.Second

// Uncontended runs workers goroutines for d, each locking and unlocking its
// own key in a loop, and reports pairs per second and the latency of a
// pair. Each worker makes one pair before the clock starts, so that scripts
// are loaded and connections dialed. The first error ends the measurement
// and is returned; workers < 1 or d <= 0 give an error wrapping
// strategy.ErrInvalidConfig.
func Uncontended(ctx context.Context, locker strategy.Locker, workers int, d time.Duration) (Speed, error) {
	if locker == nil {
		return Speed{}, errorf("%w: locker is nil", strategy.ErrInvalidConfig)
	}
	return loop(ctx, workers, d, func(ctx context.Context, key string, _ int) error {
		lease, err := locker.Lock(ctx, key)
		if err != nil {
			return fmt.Errorf("Lock(%q): %w", key, err)
		}
		if err := lease.Unlock(ctx); err != nil {
			return fmt.Errorf("Unlock(%q): %w", key, err)
		}
		return nil
	})
}

// Raw is Uncontended with bare commands instead of a Locker: SET key token
// NX PX, then the compare-and-delete script by EVALSHA, each on a
// connection borrowed from pool, as a one-round-trip technique would do
// with no bookkeeping at all. It is the ceiling for single-node techniques
// on the same server. A SET that does not reply OK, or a script that does
// not delete, is an error.
func Raw(ctx context.Context, pool strategy.Pool, workers int, d time.Duration) (Speed, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return Speed{}, errorf("%w", err)
	}
	release := scripts.CompareDelete()
	ttl := rawTTL.Milliseconds()
	return loop(ctx, workers, d, func(ctx context.Context, key string, i int) error {
		token := strconv.Itoa(i)
		reply, err := redisconn.Do(ctx, pool, "SET", key, token, "NX", "PX", ttl)
		if err != nil {
			return fmt.Errorf("SET %q NX PX: %w", key, err)
		}
		if reply == nil {
			return fmt.Errorf("SET %q NX PX: key is held", key)
		}
		n, err := redisconn.Eval(ctx, pool, release, key, token)
		if err != nil {
			return fmt.Errorf("EVALSHA compare-delete %q: %w", key, err)
		}
		if n != int64(1) {
			return fmt.Errorf("EVALSHA compare-delete %q = %v, want 1", key, n)
		}
		return nil
	})
}

// loop runs op in workers goroutines until d has passed since the start,
// each goroutine on its own key, and times every call. op gets the
// worker's key and the call's sequence number within the worker.
func loop(ctx context.Context, workers int, d time.Duration, op func(ctx context.Context, key string, i int) error) (Speed, error) {
	if workers < 1 {
		return Speed{}, errorf("%w: workers = %d, want at least 1", strategy.ErrInvalidConfig, workers)
	}
	if d <= 0 {
		return Speed{}, errorf("%w: duration = %v, want more than 0", strategy.ErrInvalidConfig, d)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := runID()
	for w := range workers {
		if err := op(ctx, workerKey(run, w), 0); err != nil {
			return Speed{}, errorf("warm-up: %w", err)
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		pairs [][]time.Duration
		errs  []error
	)
	start := time.Now()
	stop := start.Add(d)
	// Each goroutine ends when d has passed, op fails, or ctx ends.
	for w := range workers {
		wg.Go(func() {
			key := workerKey(run, w)
			var mine []time.Duration
			var err error
			for i := 1; err == nil && ctx.Err() == nil; i++ {
				t0 := time.Now()
				if !t0.Before(stop) {
					break
				}
				if err = op(ctx, key, i); err == nil {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			pairs = append(pairs, mine)
			if err != nil {
				errs = append(errs, err)
				cancel()
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return Speed{}, errorf("%w", err)
	}
	if err := ctx.Err(); err != nil {
		return Speed{}, errorf("%w", err)
	}
	var all []time.Duration
	for _, p := range pairs {
		all = append(all, p...)
	}
	return Speed{
		Workers:   workers,
		Ops:       len(all),
		Wall:      wall,
		OpsPerSec: float64(len(all)) / wall.Seconds(),
		Pair:      quantiles(all),
	}, nil
}

// runID is a short random id that keeps one measurement's keys apart from
// every other's.
func runID() string { return uuid.NewString()[:8] }

func workerKey(run string, w int) string {
	return "lockzoo-bench:" + run + ":" + strconv.Itoa(w)
}

// errorf is the package's error: "lockzoo: bench: " and the message, with
// no second "lockzoo: " from a wrapped error or sentinel (lockerr).
func errorf(format string, args ...any) error {
	return lockerr.New("bench", fmt.Errorf(format, args...))
}

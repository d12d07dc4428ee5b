package strategy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

func ExampleConfig_WithDefaults() {
	cfg, err := strategy.Config{}.WithDefaults()
	fmt.Println(cfg.TTL, cfg.Prefix, err)

	_, err = strategy.Config{TTL: -time.Second}.WithDefaults()
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	// Output:
	// 10s lock: <nil>
	// true
}

func ExampleExponential() {
	p := strategy.Exponential(time.Millisecond, 8*time.Millisecond)
	for attempt := 1; attempt <= 5; attempt++ {
		d, _ := p.Backoff(attempt)
		// Each wait is jittered within [w/2, w], w doubling up to 8ms.
		fmt.Println(attempt, d <= 8*time.Millisecond)
	}
	// Output:
	// 1 true
	// 2 true
	// 3 true
	// 4 true
	// 5 true
}

// Run ties work to a lock: the lock is extended while fn runs, fn's context
// ends if the lock is lost, and the lock is released afterwards.
func ExampleRun() {
	var locker strategy.Locker // e.g. luarelease.New(pool, strategy.Config{TTL: 10 * time.Second})
	if locker == nil {
		return
	}
	err := strategy.Run(context.Background(), locker, "nightly-report", func(ctx context.Context) error {
		// ... long work; stop as soon as ctx is done:
		// errors.Is(context.Cause(ctx), strategy.ErrNotHeld) means the lock was lost.
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}

// histogram counts durations by upper bound; counts[len(bounds)] counts
// those above the last bound.
type histogram struct {
	mu     sync.Mutex
	bounds []time.Duration
	counts []int
}

func newHistogram(bounds ...time.Duration) *histogram {
	return &histogram{bounds: bounds, counts: make([]int, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	i, _ := slices.BinarySearch(h.bounds, d) // the first bound >= d
	h.mu.Lock()
	h.counts[i]++
	h.mu.Unlock()
}

func (h *histogram) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := ""
	for i, b := range h.bounds {
		s += fmt.Sprintf("<=%v:%d ", b, h.counts[i])
	}
	return s + fmt.Sprintf(">%v:%d", h.bounds[len(h.bounds)-1], h.counts[len(h.bounds)])
}

// lockTimes feeds how long each Lock waited and each lock was held into
// histograms. NopObserver answers the events it does not need.
type lockTimes struct {
	strategy.NopObserver
	wait, held *histogram
}

func (o *lockTimes) Acquired(_ context.Context, e strategy.AcquiredEvent) { o.wait.observe(e.Wait) }
func (o *lockTimes) Released(_ context.Context, e strategy.ReleasedEvent) { o.held.observe(e.Held) }

// An Observer that keeps wait and hold times in histograms, with the
// standard library only. A service sets it in its Locker's Config (say
// luarelease.New(pool, cfg)) and publishes the counts as it likes (expvar,
// a /metrics page); here the events a Locker would report are fed by hand.
func ExampleObserver() {
	bounds := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}
	times := &lockTimes{wait: newHistogram(bounds...), held: newHistogram(bounds...)}
	cfg := strategy.Config{Observer: times} // luarelease.New(pool, cfg)

	ctx := context.Background()
	for _, wait := range []time.Duration{300 * time.Microsecond, 4 * time.Millisecond, 2 * time.Second} {
		cfg.Observer.Acquired(ctx, strategy.AcquiredEvent{Key: "orders:42", Wait: wait, Attempts: 1})
	}
	cfg.Observer.Released(ctx, strategy.ReleasedEvent{Key: "orders:42", Held: 50 * time.Millisecond})
	cfg.Observer.Lost(ctx, strategy.LostEvent{Key: "orders:42"}) // NopObserver's: ignored
	fmt.Println("wait:", times.wait)
	fmt.Println("held:", times.held)
	// Output:
	// wait: <=1ms:1 <=10ms:1 <=100ms:0 <=1s:0 >1s:1
	// held: <=1ms:0 <=10ms:0 <=100ms:1 <=1s:0 >1s:0
}

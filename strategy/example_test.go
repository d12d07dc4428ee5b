package strategy_test

import (
	"context"
	"errors"
	"fmt"
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

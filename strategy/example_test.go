package strategy_test

import (
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

package strategytest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
)

// reachBound is how long stopAt waits for a client to reach its point.
const reachBound = 5 * time.Second

// stopAt runs op in a goroutine whose context carries a gate at point, and
// returns once op is blocked there. resume opens the gate and returns op's
// error; it must be called (the goroutine ends only then) and may be called
// more than once. If op never reaches the point, stopAt resumes it and
// returns an error.
// The recorder gets the client's stop and its resumption, under the client
// ctx names.
func stopAt(ctx context.Context, rec *recorder, point string, op func(context.Context) error) (resume func() error, err error) {
	gate := fault.NewGate(point)
	done := make(chan error, 1)
	go func() { done <- op(fault.With(ctx, gate.Hook)) }()
	var (
		once    sync.Once
		result  error
		reached bool
	)
	resume = func() error {
		once.Do(func() {
			if reached {
				rec.fault(ctx, point, "resumed")
			}
			gate.Open()
			result = <-done
		})
		return result
	}
	timer := time.NewTimer(reachBound)
	defer timer.Stop()
	select {
	case <-gate.Reached():
		reached = true
		rec.fault(ctx, point, "stopped")
		return resume, nil
	case err := <-done:
		once.Do(func() { result = err })
		return resume, fmt.Errorf("returned (%v) without reaching %s", err, point)
	case <-timer.C:
		return resume, fmt.Errorf("did not reach %s within %v (%v)", point, reachBound, resume())
	}
}

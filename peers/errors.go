package peers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// ErrClosed reports a call on a Locker after its Close: strategy.ErrClosed,
// as lockzoo's own Lockers return it.
var ErrClosed = strategy.ErrClosed

// checkKey rejects an empty key as every lockzoo Locker does.
func checkKey(name, key string) error {
	if key == "" {
		return lockerr.New(name, fmt.Errorf("%w: empty key", strategy.ErrInvalidConfig))
	}
	return nil
}

// gaveUp is Lock's error once ctx ended: it wraps ErrNotAcquired, ctx's
// error and the last failure seen, if any.
func gaveUp(ctx context.Context, name, key string, last error) error {
	if last != nil {
		return lockerr.Op(name, "lock", key, fmt.Errorf("%w: %w (last failure: %w)", strategy.ErrNotAcquired, context.Cause(ctx), last))
	}
	return lockerr.Op(name, "lock", key, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, context.Cause(ctx)))
}

// retryLoop is Lock under a Config.Retry: it calls try until it returns a
// lease, ctx ends, or retry stops. An error wrapping ErrNotAcquired is a
// refusal; any other error is a transient failure and is retried too.
func retryLoop(ctx context.Context, name, key string, retry strategy.Retry, try func(context.Context) (strategy.Lease, error)) (strategy.Lease, error) {
	var last error
	for attempt := 1; ; attempt++ {
		lease, err := try(ctx)
		if err == nil {
			return lease, nil
		}
		if errors.Is(err, strategy.ErrInvalidConfig) || errors.Is(err, ErrClosed) {
			return nil, err
		}
		if !errors.Is(err, strategy.ErrNotAcquired) {
			last = err
		}
		if ctx.Err() != nil {
			return nil, gaveUp(ctx, name, key, last)
		}
		wait, ok := retry.Backoff(attempt)
		if !ok {
			if last != nil {
				return nil, lockerr.Op(name, "lock", key, fmt.Errorf("%w: retry policy stopped (last failure: %w)", strategy.ErrNotAcquired, last))
			}
			return nil, lockerr.Op(name, "lock", key, fmt.Errorf("%w: retry policy stopped", strategy.ErrNotAcquired))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, gaveUp(ctx, name, key, last)
		case <-t.C:
		}
	}
}

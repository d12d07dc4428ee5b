package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// Locker runs a Technique under the strategy.Locker contract. It is safe for
// concurrent use.
type Locker struct {
	tech  Technique
	cfg   strategy.Config
	props strategy.Properties
}

// New returns a Locker for tech. cfg is checked and completed with
// strategy.Config.WithDefaults; a bad field returns an error wrapping
// strategy.ErrInvalidConfig.
func New(tech Technique, props strategy.Properties, cfg strategy.Config) (*Locker, error) {
	if tech == nil {
		return nil, fmt.Errorf("%w: nil technique", strategy.ErrInvalidConfig)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("lockzoo: %s: %w", props.Name, err)
	}
	return &Locker{tech: tech, cfg: cfg, props: props}, nil
}

// Config returns the Locker's configuration with defaults filled in.
func (l *Locker) Config() strategy.Config { return l.cfg }

// Properties returns the technique's claimed guarantees.
func (l *Locker) Properties() strategy.Properties { return l.props }

// TryLock makes one attempt to acquire key; see strategy.Locker.
func (l *Locker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.checkKey(key); err != nil {
		return nil, err
	}
	return l.attempt(ctx, key)
}

// Lock retries TryLock under the Config's Retry policy until it holds key or
// ctx ends; see strategy.Locker. A Redis failure is retried like a held
// lock; an invalid key or an injected crash returns at once.
func (l *Locker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	if err := l.checkKey(key); err != nil {
		return nil, err
	}
	var lastFailure error // the last error that was not "held by someone else"
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for attempt := 1; ; attempt++ {
		lease, err := l.attempt(ctx, key)
		if err == nil {
			return lease, nil
		}
		if errors.Is(err, fault.ErrCrashed) {
			return nil, err
		}
		// Keep the last real failure: an attempt cut short by ctx says only
		// that ctx ended, which the final error reports anyway.
		cutShort := ctx.Err() != nil && errors.Is(err, ctx.Err())
		if !errors.Is(err, strategy.ErrNotAcquired) && (!cutShort || lastFailure == nil) {
			lastFailure = err
		}
		if ctx.Err() != nil {
			return nil, l.gaveUp(key, ctx.Err(), lastFailure)
		}
		wait, ok := l.cfg.Retry.Backoff(attempt)
		if !ok {
			return nil, l.gaveUp(key, nil, lastFailure)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, l.gaveUp(key, ctx.Err(), lastFailure)
		}
	}
}

// gaveUp builds Lock's final error: it wraps ErrNotAcquired, the context's
// error when there is one, and the last Redis failure when there was one.
func (l *Locker) gaveUp(key string, ctxErr, lastFailure error) error {
	switch {
	case ctxErr != nil && lastFailure != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: %w (last failure: %w)", l.props.Name, key, strategy.ErrNotAcquired, ctxErr, lastFailure)
	case ctxErr != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: %w", l.props.Name, key, strategy.ErrNotAcquired, ctxErr)
	case lastFailure != nil:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: retries exhausted (last failure: %w)", l.props.Name, key, strategy.ErrNotAcquired, lastFailure)
	default:
		return fmt.Errorf("lockzoo: %s: lock %q: %w: retries exhausted", l.props.Name, key, strategy.ErrNotAcquired)
	}
}

func (l *Locker) checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("lockzoo: %s: %w: empty key", l.props.Name, strategy.ErrInvalidConfig)
	}
	return nil
}

// attempt makes one acquire attempt and wraps a success in a Lease.
func (l *Locker) attempt(ctx context.Context, key string) (strategy.Lease, error) {
	token, err := l.token()
	if err != nil {
		return nil, err
	}
	rkey := l.cfg.Prefix + key
	start := time.Now()
	g, err := l.tech.Acquire(ctx, Attempt{Key: rkey, Token: token, TTL: l.cfg.TTL})
	if err != nil {
		return nil, err
	}
	if err := fault.At(ctx, fault.AcquireAfter); err != nil {
		return nil, err
	}
	return newLease(l, key, rkey, token, start, g), nil
}

func (l *Locker) token() (string, error) {
	if l.cfg.Token != nil {
		t := l.cfg.Token()
		if t == "" {
			return "", fmt.Errorf("lockzoo: %s: %w: Token returned an empty string", l.props.Name, strategy.ErrInvalidConfig)
		}
		return t, nil
	}
	u, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("lockzoo: %s: owner token: %w", l.props.Name, err)
	}
	return u.String(), nil
}

// ttlOrDefault resolves Extend's ttl argument.
func (l *Locker) ttlOrDefault(ttl time.Duration) (time.Duration, error) {
	switch {
	case ttl == 0:
		return l.cfg.TTL, nil
	case ttl < strategy.MinTTL:
		return 0, fmt.Errorf("lockzoo: %s: %w: extend ttl %v is below the minimum %v", l.props.Name, strategy.ErrInvalidConfig, ttl, strategy.MinTTL)
	}
	return ttl, nil
}

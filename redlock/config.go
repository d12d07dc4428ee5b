package redlock

import (
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// Defaults applied by New to the zero fields of Config.
const (
	// DefaultDriftFactor is the share of the TTL set aside for clock
	// drift, as in the Redis documentation.
	DefaultDriftFactor = 0.01
	// DriftFloor is added to every drift allowance: the millisecond
	// resolution of Redis expiries.
	DriftFloor = 2 * time.Millisecond
	// MinNodeTimeout and MaxNodeTimeout bound the default NodeTimeout.
	MinNodeTimeout = 10 * time.Millisecond
	MaxNodeTimeout = 250 * time.Millisecond
	// DefaultRetryMin and DefaultRetryMax bound DefaultRetry's waits.
	DefaultRetryMin = 4 * time.Millisecond
	DefaultRetryMax = 64 * time.Millisecond
)

// DefaultRetry returns the policy Lock uses when Config.Retry is nil:
// Exponential(DefaultRetryMin, DefaultRetryMax), slower than
// strategy.DefaultRetry since waiters wake on release notices.
func DefaultRetry() strategy.Retry { return strategy.Exponential(DefaultRetryMin, DefaultRetryMax) }

// Config shapes a redlock Locker. Every zero field takes its default.
type Config struct {
	// Config holds the settings every technique shares. A nil Retry means
	// DefaultRetry.
	strategy.Config
	// Quorum is how many nodes must grant the lock; zero means
	// len(pools)/2+1. Below a majority two clients can hold the lock.
	Quorum int
	// DriftFactor is the share of the TTL subtracted from the validity for
	// clock drift; zero means DefaultDriftFactor.
	DriftFactor float64
	// NodeTimeout bounds every call to one node; zero means TTL/10 within
	// [MinNodeTimeout, MaxNodeTimeout]. Too short a timeout turns a GC
	// pause or CPU starvation into node failures.
	NodeTimeout time.Duration
	// DisableRestartGuard switches off the restart guard, only to show what
	// a restarted node without persistence does. It is always off on a
	// Locker whose nodes include a Redis Cluster (a cluster.Pool).
	DisableRestartGuard bool
}

// check validates cfg for pools and returns it with its defaults filled
// in; ttl is the TTL after strategy's defaults. Errors wrap
// strategy.ErrInvalidConfig and name the field.
func check(pools []strategy.Pool, cfg Config, ttl time.Duration) (Config, error) {
	if len(pools) == 0 {
		return cfg, fmt.Errorf("%w: pools is empty, want at least one Redis node", strategy.ErrInvalidConfig)
	}
	for i, p := range pools {
		if err := engine.CheckPool(p, fmt.Sprintf("pools[%d]", i)); err != nil {
			return cfg, err
		}
	}
	switch n := len(pools); {
	case cfg.Quorum == 0:
		cfg.Quorum = n/2 + 1
	case cfg.Quorum < 1 || cfg.Quorum > n:
		return cfg, fmt.Errorf("%w: Quorum %d is outside 1..%d (the number of pools)", strategy.ErrInvalidConfig, cfg.Quorum, n)
	}
	switch {
	case cfg.DriftFactor < 0:
		return cfg, fmt.Errorf("%w: DriftFactor %v is negative", strategy.ErrInvalidConfig, cfg.DriftFactor)
	case cfg.DriftFactor == 0:
		cfg.DriftFactor = DefaultDriftFactor
	}
	switch {
	case cfg.NodeTimeout < 0:
		return cfg, fmt.Errorf("%w: NodeTimeout %v is negative", strategy.ErrInvalidConfig, cfg.NodeTimeout)
	case cfg.NodeTimeout == 0:
		cfg.NodeTimeout = DefaultNodeTimeout(ttl)
	}
	return cfg, nil
}

// DefaultNodeTimeout returns the NodeTimeout for a TTL of ttl when
// Config.NodeTimeout is zero: ttl/10 within [MinNodeTimeout, MaxNodeTimeout].
func DefaultNodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, MinNodeTimeout), MaxNodeTimeout)
}

// driftFor returns the time set aside for clock drift on a lock of ttl.
func (c *Config) driftFor(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*c.DriftFactor) + DriftFloor
}

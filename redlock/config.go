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

// settings is a Config checked against the pools, with its defaults.
type settings struct {
	quorum      int
	drift       float64
	nodeTimeout time.Duration
	guard       bool
}

// check validates cfg for pools and fills in defaults; ttl is the TTL
// after strategy's defaults. Errors wrap strategy.ErrInvalidConfig and
// name the field.
func check(pools []strategy.Pool, cfg Config, ttl time.Duration) (settings, error) {
	if len(pools) == 0 {
		return settings{}, fmt.Errorf("%w: pools is empty, want at least one Redis node", strategy.ErrInvalidConfig)
	}
	for i, p := range pools {
		if err := engine.CheckPool(p, fmt.Sprintf("pools[%d]", i)); err != nil {
			return settings{}, err
		}
	}
	s := settings{quorum: cfg.Quorum, drift: cfg.DriftFactor, nodeTimeout: cfg.NodeTimeout, guard: !cfg.DisableRestartGuard}
	switch n := len(pools); {
	case s.quorum == 0:
		s.quorum = n/2 + 1
	case s.quorum < 1 || s.quorum > n:
		return settings{}, fmt.Errorf("%w: Quorum %d is outside 1..%d (the number of pools)", strategy.ErrInvalidConfig, s.quorum, n)
	}
	switch {
	case s.drift < 0:
		return settings{}, fmt.Errorf("%w: DriftFactor %v is negative", strategy.ErrInvalidConfig, s.drift)
	case s.drift == 0:
		s.drift = DefaultDriftFactor
	}
	switch {
	case s.nodeTimeout < 0:
		return settings{}, fmt.Errorf("%w: NodeTimeout %v is negative", strategy.ErrInvalidConfig, s.nodeTimeout)
	case s.nodeTimeout == 0:
		s.nodeTimeout = DefaultNodeTimeout(ttl)
	}
	return s, nil
}

// DefaultNodeTimeout returns the NodeTimeout for a TTL of ttl when
// Config.NodeTimeout is zero: ttl/10 within [MinNodeTimeout,
// MaxNodeTimeout].
func DefaultNodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, MinNodeTimeout), MaxNodeTimeout)
}

// driftFor returns the time set aside for clock drift on a lock of ttl.
func (s settings) driftFor(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*s.drift) + DriftFloor
}

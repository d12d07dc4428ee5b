package redlock

import (
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// Defaults applied by New to the zero fields of Config.
const (
	// DefaultDriftFactor is the share of the TTL set aside for the drift
	// between the clocks of the client and of the Redis nodes, as in the
	// Redis documentation's reference implementation.
	DefaultDriftFactor = 0.01
	// DriftFloor is added to every drift allowance: 2 ms for the
	// millisecond resolution of Redis expiries.
	DriftFloor = 2 * time.Millisecond
	// MinNodeTimeout and MaxNodeTimeout bound the default NodeTimeout,
	// which is a tenth of the TTL (see the package documentation, "Node
	// timeouts").
	MinNodeTimeout = 10 * time.Millisecond
	MaxNodeTimeout = 250 * time.Millisecond
	// DefaultRetryMin and DefaultRetryMax bound the jittered waits of
	// DefaultRetry.
	DefaultRetryMin = 4 * time.Millisecond
	DefaultRetryMax = 64 * time.Millisecond
)

// DefaultRetry returns the policy Lock uses when Config.Retry is nil:
// Exponential(DefaultRetryMin, DefaultRetryMax), slower than
// strategy.DefaultRetry because every redlock attempt costs a call to every
// node, and because waiting does not rely on the timer: a waiter queues in
// every node's line, a release tells the head of the line at once (or, for
// a waiter of the same Locker, hands it the lock), and a waiter attempts
// no later than the holder's remaining TTL or LineStale/2 whatever its
// Retry (LineListened/2 once every node saw its Locker listening). The timer is the fallback for a notice that was lost. On a
// 2-core machine, polling every 4 ms instead cost a fifth of the lock's
// utilisation under contention (see BenchmarkContended).
func DefaultRetry() strategy.Retry { return strategy.Exponential(DefaultRetryMin, DefaultRetryMax) }

// Config shapes a redlock Locker. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// Config holds the settings every technique shares (TTL, Prefix, Retry,
	// Token, Clock). A nil Retry means DefaultRetry, not
	// strategy.DefaultRetry.
	strategy.Config

	// Quorum is how many nodes must grant the lock; zero means a majority,
	// len(pools)/2+1. Any value below a majority lets two clients hold the
	// lock at once (Quorum 1 is article 003's broken sample); it is accepted
	// so that the flaw can be shown.
	Quorum int

	// DriftFactor is the share of the TTL subtracted from the validity for
	// clock drift; zero means DefaultDriftFactor (0.01). The validity of a
	// lock is TTL - elapsed - (TTL*DriftFactor + DriftFloor).
	DriftFactor float64

	// NodeTimeout bounds every call to one node: getting a connection,
	// sending, and reading the reply. Zero means a tenth of the TTL, kept
	// within [MinNodeTimeout, MaxNodeTimeout] (10 ms to 250 ms). A decision
	// never waits for it when a quorum has answered: it bounds how long a
	// frozen node can hold the background goroutine that talks to it, and
	// how long an attempt takes when no quorum can answer without that
	// node. Too short a timeout turns a client's GC pause or CPU starvation
	// into node failures.
	NodeTimeout time.Duration

	// DisableRestartGuard switches off the restart guard (see the package
	// documentation). The zero value keeps it on; switch it off only to
	// show what a restarted node without persistence does to Redlock.
	// It is off on a Locker whose nodes include a Redis Cluster (a
	// cluster.Pool), which is many servers behind one node.
	DisableRestartGuard bool
}

// settings is a Config checked against the pools and completed with its
// defaults, except for the strategy.Config part, which the engine checks.
type settings struct {
	quorum      int
	drift       float64
	nodeTimeout time.Duration
	guard       bool
}

// check validates cfg for the given pools and fills in defaults. ttl is the
// lock lifetime after strategy defaults, used for the default NodeTimeout.
// Errors wrap strategy.ErrInvalidConfig and name the field.
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

// DefaultNodeTimeout returns the NodeTimeout used for a lock lifetime of ttl
// when Config.NodeTimeout is zero: ttl/10 kept within [MinNodeTimeout,
// MaxNodeTimeout].
func DefaultNodeTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/10, MinNodeTimeout), MaxNodeTimeout)
}

// driftFor returns the time set aside for clock drift on a lock of ttl.
func (s settings) driftFor(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*s.drift) + DriftFloor
}

package strategy

import (
	"fmt"
	"time"
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultTTL    = 10 * time.Second
	DefaultPrefix = "lock:"
	// MinTTL is the smallest TTL a technique accepts: Redis expiries have
	// millisecond resolution.
	MinTTL = time.Millisecond
	// DefaultReplicaTimeout is how long a lease waits for its replicas'
	// acknowledgement (Config.ReplicaTimeout) when Replicas or WaitAOF asks
	// for one and ReplicaTimeout is zero; at most a quarter of the TTL.
	DefaultReplicaTimeout = 100 * time.Millisecond
)

// Config shapes a Locker. The zero value is usable: every zero field takes
// its default.
type Config struct {
	TTL    time.Duration // lock lifetime; zero means DefaultTTL (10s)
	Prefix string        // key prefix; zero means DefaultPrefix ("lock:")
	Retry  Retry         // wait policy for Lock; nil means DefaultRetry()
	// Token names the holder (a host or process name, say); nil means a
	// random UUIDv4. lockzoo makes every value it writes unique whatever
	// Token returns: it appends "." and 128 random bits for every Lock or
	// TryLock call (and "." and the attempt number for each of Lock's
	// attempts), so two Lockers whose Token returns the same string never
	// both hold a key and never release each other's lock. Lease.Token
	// returns the value written. A Token that returns "" makes the call
	// fail with ErrInvalidConfig. A technique that writes no owner
	// (getset_timestamp writes an expiry timestamp) ignores the value.
	Token func() string
	Clock func() time.Time // the client's wall clock; nil means time.Now. Tests skew it.
	// Observer hears every call's events (acquired, not acquired,
	// released, extended, lost, handed off), synchronously; nil means
	// none, at no cost. See Observer.
	Observer Observer
	// Replicas is how many replicas of the lock's primary must acknowledge
	// (WAIT) every acquire, extend and hand-off before it counts; zero
	// means none are waited for. Where a lease could not be acknowledged
	// in time, the acquire is taken back and the error wraps
	// ErrNotReplicated. Only lua_release honours it; the other techniques
	// refuse a non-zero value with ErrInvalidConfig. With Replicas equal
	// to every replica, and a failover that promotes the most up-to-date
	// replica, the promoted replica holds every granted lease; with fewer,
	// or a failover that may promote any replica, it may not (see
	// docs/replicas.md).
	Replicas int
	// ReplicaTimeout bounds each wait for the replicas' acknowledgement
	// (WAIT's timeout); zero means DefaultReplicaTimeout, capped at a
	// quarter of the TTL. It must be below the TTL. The caller's ctx
	// bounds the wait too.
	ReplicaTimeout time.Duration
	// WaitAOF asks, after each acknowledged write, for WAITAOF 1 Replicas
	// as well: the primary and Replicas replicas must have written it to
	// their append-only files (fsync). The server must have WAITAOF
	// (Redis 7.2 or later, Valkey) and appendonly yes; otherwise the call
	// fails with an error naming the problem and takes nothing.
	WaitAOF bool
}

// WithDefaults returns c with every zero field set to its default, or an
// error wrapping ErrInvalidConfig that names the first bad field: a negative
// TTL, or a TTL below MinTTL; negative Replicas; a negative ReplicaTimeout,
// one below 1 ms, or one not below the TTL. ReplicaTimeout is filled only
// when Replicas or WaitAOF asks for a wait. It does not fill Token
// (techniques choose their own default token source).
func (c Config) WithDefaults() (Config, error) {
	switch {
	case c.TTL < 0:
		return c, fmt.Errorf("%w: TTL %v is negative", ErrInvalidConfig, c.TTL)
	case c.TTL == 0:
		c.TTL = DefaultTTL
	case c.TTL < MinTTL:
		return c, fmt.Errorf("%w: TTL %v is below the minimum %v", ErrInvalidConfig, c.TTL, MinTTL)
	}
	if err := c.replicaDefaults(); err != nil {
		return c, err
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Retry == nil {
		c.Retry = DefaultRetry()
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c, nil
}

// replicaDefaults checks Replicas and ReplicaTimeout against the TTL (set
// by then) and fills ReplicaTimeout when a wait is asked for.
func (c *Config) replicaDefaults() error {
	switch {
	case c.Replicas < 0:
		return fmt.Errorf("%w: Replicas %d is negative", ErrInvalidConfig, c.Replicas)
	case c.ReplicaTimeout < 0:
		return fmt.Errorf("%w: ReplicaTimeout %v is negative", ErrInvalidConfig, c.ReplicaTimeout)
	case c.ReplicaTimeout == 0:
		if c.Replicas > 0 || c.WaitAOF {
			c.ReplicaTimeout = max(min(DefaultReplicaTimeout, c.TTL/4), time.Millisecond)
		}
	case c.ReplicaTimeout < time.Millisecond:
		// WAIT takes whole milliseconds, and 0 would wait for ever.
		return fmt.Errorf("%w: ReplicaTimeout %v is below 1ms", ErrInvalidConfig, c.ReplicaTimeout)
	case c.ReplicaTimeout >= c.TTL:
		return fmt.Errorf("%w: ReplicaTimeout %v is not below the TTL %v: the lock could expire before its replicas acknowledged it", ErrInvalidConfig, c.ReplicaTimeout, c.TTL)
	}
	return nil
}

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
}

// WithDefaults returns c with every zero field set to its default, or an
// error wrapping ErrInvalidConfig that names the first bad field: a negative
// TTL, or a TTL below MinTTL. It does not fill Token (techniques choose their
// own default token source).
func (c Config) WithDefaults() (Config, error) {
	switch {
	case c.TTL < 0:
		return c, fmt.Errorf("%w: TTL %v is negative", ErrInvalidConfig, c.TTL)
	case c.TTL == 0:
		c.TTL = DefaultTTL
	case c.TTL < MinTTL:
		return c, fmt.Errorf("%w: TTL %v is below the minimum %v", ErrInvalidConfig, c.TTL, MinTTL)
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

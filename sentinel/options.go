package sentinel

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// Defaults of the options.
const (
	defaultTimeout        = 2 * time.Second
	defaultMaxIdle        = 64
	defaultIdleTimeout    = 5 * time.Minute
	defaultHealthInterval = time.Second
)

// Option configures a Pool; pass them to New.
type Option func(*options)

// options is what Options fill in.
type options struct {
	nodeDial       []redis.DialOption
	sentinelDial   []redis.DialOption
	timeout        time.Duration
	maxIdle        int
	maxActive      int
	idleTimeout    time.Duration
	healthInterval time.Duration
	onSwitch       func(from, to string)
}

// WithAuth makes every connection to a data node (the master)
// authenticate as user with password (AUTH user password; with user ""
// AUTH password, the requirepass of Redis before 6). The user needs ROLE
// besides the commands of the locks (ROLE is in @admin and @dangerous:
// grant +role).
func WithAuth(user, password string) Option {
	return func(o *options) {
		o.nodeDial = append(o.nodeDial, redis.DialUsername(user), redis.DialPassword(password))
	}
}

// WithSentinelAuth makes every connection to a Sentinel authenticate as
// user with password, independently of WithAuth: Sentinels have users
// and passwords of their own (user and requirepass in sentinel.conf).
func WithSentinelAuth(user, password string) Option {
	return func(o *options) {
		o.sentinelDial = append(o.sentinelDial, redis.DialUsername(user), redis.DialPassword(password))
	}
}

// WithDialOptions adds redigo dial options to every connection to a data
// node: redis.DialUseTLS and redis.DialTLSConfig for TLS,
// redis.DialReadTimeout, redis.DialNetDial for a dialer of one's own, and
// so on. Authentication belongs in WithAuth, which comes after.
func WithDialOptions(opts ...redis.DialOption) Option {
	return func(o *options) { o.nodeDial = append(o.nodeDial, opts...) }
}

// WithSentinelDialOptions adds redigo dial options to every connection to
// a Sentinel, as WithDialOptions does for data nodes.
func WithSentinelDialOptions(opts ...redis.DialOption) Option {
	return func(o *options) { o.sentinelDial = append(o.sentinelDial, opts...) }
}

// WithTimeout bounds, besides the caller's ctx, each question to one
// Sentinel (dial and command) and each new connection to the master (dial,
// AUTH and ROLE). Zero means 2 s.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithMaxIdle sets how many idle connections to the master the Pool keeps
// (redis.Pool's MaxIdle); zero means 64.
func WithMaxIdle(n int) Option {
	return func(o *options) { o.maxIdle = n }
}

// WithMaxActive caps the connections to the master open at once
// (redis.Pool's MaxActive, with Wait: GetContext waits for one, bounded
// by its ctx); zero means no cap.
func WithMaxActive(n int) Option {
	return func(o *options) { o.maxActive = n }
}

// WithIdleTimeout closes connections idle for longer than d; zero means
// 5 minutes.
func WithIdleTimeout(d time.Duration) Option {
	return func(o *options) { o.idleTimeout = d }
}

// WithHealthInterval sets how often the Pool PINGs the Sentinel it
// listens to for +switch-master, so that a Sentinel that went silent is
// noticed and another one listened to; zero means 1 s.
func WithHealthInterval(d time.Duration) Option {
	return func(o *options) { o.healthInterval = d }
}

// WithOnSwitch has fn called with the old and the new master's address
// each time the Pool moves to another master. fn runs on the goroutine
// that found the change (the Pool's listener, or a caller of GetContext)
// and must return quickly.
func WithOnSwitch(fn func(from, to string)) Option {
	return func(o *options) { o.onSwitch = fn }
}

// buildOptions applies opts over the defaults and checks the result; an
// error wraps strategy.ErrInvalidConfig and names the option.
func buildOptions(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	switch {
	case o.timeout < 0:
		return o, fmt.Errorf("%w: WithTimeout(%v): want 0 or more", strategy.ErrInvalidConfig, o.timeout)
	case o.maxIdle < 0:
		return o, fmt.Errorf("%w: WithMaxIdle(%d): want 0 or more", strategy.ErrInvalidConfig, o.maxIdle)
	case o.maxActive < 0:
		return o, fmt.Errorf("%w: WithMaxActive(%d): want 0 or more", strategy.ErrInvalidConfig, o.maxActive)
	case o.idleTimeout < 0:
		return o, fmt.Errorf("%w: WithIdleTimeout(%v): want 0 or more", strategy.ErrInvalidConfig, o.idleTimeout)
	case o.healthInterval < 0:
		return o, fmt.Errorf("%w: WithHealthInterval(%v): want 0 or more", strategy.ErrInvalidConfig, o.healthInterval)
	}
	if o.timeout == 0 {
		o.timeout = defaultTimeout
	}
	if o.maxIdle == 0 {
		o.maxIdle = defaultMaxIdle
	}
	if o.idleTimeout == 0 {
		o.idleTimeout = defaultIdleTimeout
	}
	if o.healthInterval == 0 {
		o.healthInterval = defaultHealthInterval
	}
	return o, nil
}

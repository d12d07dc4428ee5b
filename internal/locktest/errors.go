package locktest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// sentinels are the strategy errors whose text CheckError looks for.
var sentinels = []error{
	strategy.ErrNotAcquired, strategy.ErrNotHeld, strategy.ErrUnsupported,
	strategy.ErrInvalidConfig, strategy.ErrClosed,
}

// CheckError fails t unless err, returned to a caller of the technique
// named technique (or of any technique, when technique is ""), reads
// "lockzoo: <technique>: ...", with "lockzoo:" and the technique's name
// each once, and names a strategy sentinel (by its text without the
// "lockzoo: " prefix) exactly when errors.Is matches it. A nil err passes.
func CheckError(t testing.TB, technique, call string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "lockzoo: ") {
		t.Errorf("%s returned %q, want it to start with \"lockzoo: \"", call, msg)
	}
	if n := strings.Count(msg, "lockzoo:"); n != 1 {
		t.Errorf("%s returned %q, which has \"lockzoo:\" %d times, want once", call, msg, n)
	}
	if technique != "" {
		if !strings.HasPrefix(msg, "lockzoo: "+technique+": ") {
			t.Errorf("%s returned %q, want it to start with %q", call, msg, "lockzoo: "+technique+": ")
		}
		if n := strings.Count(msg, technique); n != 1 {
			t.Errorf("%s returned %q, which names %s %d times, want once", call, msg, technique, n)
		}
	}
	for _, s := range sentinels {
		text := strings.TrimPrefix(s.Error(), "lockzoo: ")
		if named, is := strings.Contains(msg, text), errors.Is(err, s); named != is {
			t.Errorf("%s returned %q: says %q: %v, errors.Is(err, %v): %v; want both or neither", call, msg, text, named, s, is)
		}
	}
}

// errorChecks wraps a Factory so that every error a caller gets from it,
// from a Locker it built, or from one of their leases, goes through
// CheckError. The technique's name is learned from the first Locker built
// (Properties().Name), and shared by the subtests of one Conformance run.
type errorChecks struct {
	mu   sync.Mutex
	name string
}

func (c *errorChecks) technique() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// factory returns f with every error it and its Lockers return checked in t.
func (c *errorChecks) factory(t testing.TB, f Factory) Factory {
	return func(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
		l, err := f(pool, cfg)
		CheckError(t, c.technique(), "New()", err)
		if l == nil {
			return l, err
		}
		c.mu.Lock()
		if c.name == "" {
			c.name = l.Properties().Name
		}
		c.mu.Unlock()
		return &checkedLocker{Locker: l, t: t, c: c}, err
	}
}

// checkedLocker is a Locker whose errors, and its leases', are checked.
// It keeps the Locker's Close and Config.
type checkedLocker struct {
	strategy.Locker
	t testing.TB
	c *errorChecks
}

func (l *checkedLocker) check(call string, err error) error {
	l.t.Helper()
	CheckError(l.t, l.Properties().Name, call, err)
	return err
}

func (l *checkedLocker) lease(s strategy.Lease) strategy.Lease {
	if s == nil {
		return nil
	}
	return &checkedLease{Lease: s, l: l}
}

func (l *checkedLocker) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	s, err := l.Locker.TryLock(ctx, key)
	return l.lease(s), l.check("TryLock()", err)
}

func (l *checkedLocker) Lock(ctx context.Context, key string) (strategy.Lease, error) {
	s, err := l.Locker.Lock(ctx, key)
	return l.lease(s), l.check("Lock()", err)
}

// Close closes the Locker when it has Close.
func (l *checkedLocker) Close() error {
	if c, ok := l.Locker.(Closer); ok {
		return l.check("Close()", c.Close())
	}
	return nil
}

// Config returns the Locker's Config when it reports one (see TTLOf).
func (l *checkedLocker) Config() strategy.Config {
	if c, ok := l.Locker.(interface{ Config() strategy.Config }); ok {
		return c.Config()
	}
	return strategy.Config{}
}

// checkedLease is a Lease whose errors are checked.
type checkedLease struct {
	strategy.Lease
	l *checkedLocker
}

func (s *checkedLease) Extend(ctx context.Context, ttl time.Duration) error {
	return s.l.check("Extend()", s.Lease.Extend(ctx, ttl))
}

func (s *checkedLease) Unlock(ctx context.Context) error {
	return s.l.check("Unlock()", s.Lease.Unlock(ctx))
}

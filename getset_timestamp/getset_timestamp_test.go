package getsettimestamp_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return getsettimestamp.New(pool, cfg)
}

func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	l, err := getsettimestamp.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "getset_timestamp", MutualExclusion: true, AtomicAcquire: true, OwnerSafeRelease: false, ClockSafe: false,
		AcquireRoundTrips: 1, ReleaseRoundTrips: 1,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// newLocker builds a getset_timestamp Locker over node, closed in
// t.Cleanup, or fails the test.
func newLocker(t *testing.T, node *redistest.Node, cfg strategy.Config) *getsettimestamp.Locker {
	t.Helper()
	l, err := getsettimestamp.New(node.Pool(), cfg)
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	locktest.CloseOnCleanup(t, l)
	return l
}

// skewed returns a clock that runs d ahead of time.Now (behind for d < 0).
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// exists reports whether key exists or fails the test.
func exists(t *testing.T, node *redistest.Node, key string) bool {
	t.Helper()
	n, err := redis.Int(node.Do("EXISTS", key))
	if err != nil {
		t.Fatalf("EXISTS %s = %v, want nil", key, err)
	}
	return n == 1
}

// stampOf parses a stored value or a lease token as Unix milliseconds or
// fails the test.
func stampOf(t *testing.T, v string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("ParseInt(%q) = %v, want a Unix millisecond timestamp", v, err)
	}
	return n
}

// attempts is a Retry policy that stops Lock after n attempts, 1 ms apart.
type attempts int

func (n attempts) Backoff(attempt int) (time.Duration, bool) {
	return time.Millisecond, attempt < int(n)
}

// TestRedisState checks what getset_timestamp writes with a fixed clock:
// the expiry time in Unix milliseconds, no Redis TTL, a later time after
// Extend (which the lease's Token follows), and no key after Unlock.
func TestRedisState(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	fixed := time.UnixMilli(1_700_000_000_000)
	l := newLocker(t, node, strategy.Config{
		TTL: 10 * time.Second, Prefix: "p:",
		Clock: func() time.Time { return fixed },
	})
	start := time.Now()
	lease, err := l.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() = %v, want nil", err)
	}
	if got, want := lease.Token(), "1700000010000"; got != want {
		t.Errorf("Token() = %q, want %q (clock + TTL in Unix ms)", got, want)
	}
	if got := locktest.Get(t, node, "p:k"); got != lease.Token() {
		t.Errorf("GET p:k = %q, want the lease token %q", got, lease.Token())
	}
	if ttl, err := redis.Int64(node.Do("PTTL", "p:k")); err != nil || ttl != -1 {
		t.Errorf("PTTL p:k = %d, %v; want -1 (no Redis expiry, as in the article)", ttl, err)
	}
	if dl := lease.Deadline(); dl.Before(start.Add(10*time.Second)) || dl.After(time.Now().Add(10*time.Second)) {
		t.Errorf("Deadline() = %v, want the TTL after the call started, %v", dl, start.Add(10*time.Second))
	}
	deadline := lease.Deadline()
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		t.Fatalf("Extend() = %v, want nil", err)
	}
	if got, want := lease.Token(), "1700000030000"; got != want {
		t.Errorf("Token() after Extend(30s) = %q, want %q", got, want)
	}
	if got := locktest.Get(t, node, "p:k"); got != lease.Token() {
		t.Errorf("GET p:k after Extend = %q, want the new token %q", got, lease.Token())
	}
	if !lease.Deadline().After(deadline.Add(15 * time.Second)) {
		t.Errorf("Deadline() after Extend(30s) = %v, want later than %v", lease.Deadline(), deadline.Add(15*time.Second))
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if exists(t, node, "p:k") {
		t.Errorf("EXISTS p:k after Unlock = 1, want 0")
	}
}

// TestNotTimestamp puts another application's value in the lock key:
// TryLock must return ErrNotTimestamp naming the key and the value, without
// matching ErrNotAcquired, and leave the value as it was; Lock retries it
// until ctx ends and reports it as the last failure.
func TestNotTimestamp(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := newLocker(t, node, strategy.Config{})
	limited := newLocker(t, node, strategy.Config{Retry: attempts(3)})
	values := []struct{ name, value, inMessage string }{
		{"word", "hello", `"hello"`},
		{"empty", "", `""`},
		{"negative", "-5", `"-5"`},
		{"fraction", "1700000000000.5", `"1700000000000.5"`},
		{"seconds with spaces", " 1700000000 ", `" 1700000000 "`},
		{"long", strings.Repeat("x", 1000), `"` + strings.Repeat("x", 64) + `..."`},
	}
	for _, v := range values {
		t.Run(v.name, func(t *testing.T) {
			if _, err := node.Do("SET", "lock:k", v.value); err != nil {
				t.Fatalf("SET lock:k = %v, want nil", err)
			}
			_, err := l.TryLock(context.Background(), "k")
			if !errors.Is(err, getsettimestamp.ErrNotTimestamp) || errors.Is(err, strategy.ErrNotAcquired) {
				t.Fatalf("TryLock() = %v, want %v and not %v", err, getsettimestamp.ErrNotTimestamp, strategy.ErrNotAcquired)
			}
			if msg := err.Error(); !strings.Contains(msg, `"lock:k"`) || !strings.Contains(msg, v.inMessage) {
				t.Errorf("TryLock() error %q, want it to name the key %q and the value %s", msg, "lock:k", v.inMessage)
			}
			// Lock does not spin forever: it gives up when ctx ends (the
			// last failure may then be the call ctx cut short)...
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err = l.Lock(ctx, "k")
			for _, want := range []error{strategy.ErrNotAcquired, context.DeadlineExceeded} {
				if !errors.Is(err, want) {
					t.Errorf("Lock() until ctx ends = %v, want %v", err, want)
				}
			}
			// ...or when its Retry policy stops, reporting ErrNotTimestamp.
			_, err = limited.Lock(context.Background(), "k")
			for _, want := range []error{strategy.ErrNotAcquired, getsettimestamp.ErrNotTimestamp} {
				if !errors.Is(err, want) {
					t.Errorf("Lock() with 3 attempts = %v, want %v", err, want)
				}
			}
			if got := locktest.Get(t, node, "lock:k"); got != v.value {
				t.Errorf("GET lock:k = %.80q, want the untouched %.80q", got, v.value)
			}
		})
	}
	t.Run("wrong type", func(t *testing.T) {
		if _, err := node.Do("DEL", "lock:k"); err != nil {
			t.Fatalf("DEL lock:k = %v, want nil", err)
		}
		if _, err := node.Do("RPUSH", "lock:k", "item"); err != nil {
			t.Fatalf("RPUSH lock:k = %v, want nil", err)
		}
		if _, err := l.TryLock(context.Background(), "k"); err == nil || errors.Is(err, strategy.ErrNotAcquired) {
			t.Errorf("TryLock() on a list = %v, want a Redis failure that is not %v", err, strategy.ErrNotAcquired)
		}
		if n, err := redis.Int(node.Do("LLEN", "lock:k")); err != nil || n != 1 {
			t.Errorf("LLEN lock:k = %d, %v; want 1 (untouched)", n, err)
		}
	})
}

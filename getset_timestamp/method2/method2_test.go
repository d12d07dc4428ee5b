package method2_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/getset_timestamp/method2"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

func TestMain(m *testing.M) { locktest.VerifyTestMain(m) }

func factory(pool strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
	return method2.New(pool, cfg)
}

// TestConformance runs the kit; the checks that need an Extend, a
// take-back or an owner-checked late release skip or check ErrUnsupported,
// and race_test.go shows what happens instead.
func TestConformance(t *testing.T) {
	locktest.Conformance(t, factory)
}

func TestProperties(t *testing.T) {
	l, err := method2.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	want := strategy.Properties{
		Name: "getset_timestamp/method2", MutualExclusion: false, AtomicAcquire: true, OwnerSafeRelease: false, ClockSafe: false,
		AcquireRoundTrips: 1, ReleaseRoundTrips: 1,
	}
	if got := l.Properties(); got != want {
		t.Errorf("Properties() = %+v, want %+v", got, want)
	}
}

// skewed returns a clock that runs d ahead of time.Now (behind for d < 0).
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// TestRedisState checks what method 2 writes with a fixed clock: the
// expiry time in Unix milliseconds under <prefix><key>, no Redis TTL, an
// unsupported Extend that changes nothing, and no key after Unlock.
func TestRedisState(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	fixed := time.UnixMilli(1_700_000_000_000)
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{
		TTL: 10 * time.Second, Prefix: "p:",
		Clock: func() time.Time { return fixed },
	})
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
	if err := lease.Extend(ctx, time.Minute); !errors.Is(err, strategy.ErrUnsupported) {
		t.Errorf("Extend() = %v, want %v", err, strategy.ErrUnsupported)
	}
	if got := locktest.Get(t, node, "p:k"); got != lease.Token() {
		t.Errorf("GET p:k after Extend = %q, want it unchanged, %q", got, lease.Token())
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatalf("Unlock() = %v, want nil", err)
	}
	if got := locktest.Get(t, node, "p:k"); got != "" {
		t.Errorf("GET p:k after Unlock = %q, want no key", got)
	}
}

// TestTakeOverExpired: a waiter whose clock says the stored time has passed
// DELs the key and SETNXes its own time; one whose clock says it has not
// is refused and leaves the key alone.
func TestTakeOverExpired(t *testing.T) {
	tests := []struct {
		name   string
		stored string // what the key holds before the attempt
		wantOK bool
	}{
		{"passed", strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10), true},
		{"zero", "0", true},
		{"live", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second})
			locktest.MustDo(t, node, "SET", "lock:k", tt.stored)
			lease, err := l.TryLock(context.Background(), "k")
			if !tt.wantOK {
				if !errors.Is(err, strategy.ErrNotAcquired) {
					t.Fatalf("TryLock() of a live lock = %v, want %v", err, strategy.ErrNotAcquired)
				}
				if got := locktest.Get(t, node, "lock:k"); got != tt.stored {
					t.Errorf("GET lock:k = %q, want the untouched %q", got, tt.stored)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryLock() of an expired lock = %v, want nil", err)
			}
			if got := locktest.Get(t, node, "lock:k"); got != lease.Token() {
				t.Errorf("GET lock:k = %q, want the new holder's time %q", got, lease.Token())
			}
		})
	}
}

// TestClockAheadTakesLiveLock: a client whose clock runs ahead sees a live
// lock as expired, DELs it and takes it (ClockSafe is false).
func TestClockAheadTakesLiveLock(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	a := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second})
	b := locktest.MustNew(t, factory, node.Pool(), strategy.Config{TTL: 10 * time.Second, Clock: skewed(time.Minute)})
	held, err := a.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by A = %v, want nil", err)
	}
	taken, err := b.TryLock(ctx, "k")
	if err != nil {
		t.Fatalf("TryLock() by B, its clock a minute ahead = %v, want nil (it sees A's time passed)", err)
	}
	if !time.Now().Before(held.Deadline()) {
		t.Errorf("A's Deadline() = %v, want after now: A still believes it holds the lock", held.Deadline())
	}
	if got := locktest.Get(t, node, "lock:k"); got != taken.Token() {
		t.Errorf("GET lock:k = %q, want B's time %q", got, taken.Token())
	}
}

// TestNotTimestamp puts another application's value in the lock key:
// TryLock returns ErrNotTimestamp naming the key and the value, without
// matching ErrNotAcquired, and neither deletes nor overwrites it.
func TestNotTimestamp(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	l := locktest.MustNew(t, factory, node.Pool(), strategy.Config{})
	for _, v := range []string{"hello", "", "-5", strings.Repeat("x", 100)} {
		locktest.MustDo(t, node, "SET", "lock:k", v)
		_, err := l.TryLock(context.Background(), "k")
		if !errors.Is(err, method2.ErrNotTimestamp) || errors.Is(err, strategy.ErrNotAcquired) {
			t.Fatalf("TryLock() over %.20q = %v, want %v and not %v", v, err, method2.ErrNotTimestamp, strategy.ErrNotAcquired)
		}
		if msg := err.Error(); !strings.Contains(msg, `"lock:k"`) {
			t.Errorf("TryLock() error %q, want it to name the key %q", msg, "lock:k")
		}
		if got := locktest.Get(t, node, "lock:k"); got != v {
			t.Errorf("GET lock:k = %.20q, want the untouched %.20q", got, v)
		}
	}
}

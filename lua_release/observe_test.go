package luarelease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// observed builds a Locker over pool whose Config.Observer is a new
// Recorder, closed in t.Cleanup.
func observed(t *testing.T, pool strategy.Pool, cfg strategy.Config) (strategy.Locker, *locktest.Recorder) {
	t.Helper()
	rec := &locktest.Recorder{}
	cfg.Observer = rec
	return newLocker(t, pool, cfg), rec
}

// wantKinds fails the test unless the events are of the kinds want
// (space-separated, in order).
func wantKinds(t *testing.T, who string, events []locktest.Event, want string) {
	t.Helper()
	if got := locktest.Kinds(events); got != want {
		t.Fatalf("%s events = %q, want %q", who, got, want)
	}
}

// TestObserverUncontended: TryLock and Lock of a free key report Acquired
// (one attempt, the lease's token and fence), Extend reports Extended with
// the new Deadline, and Unlock reports Released, still held.
func TestObserverUncontended(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name string
		op   string
		lock func(strategy.Locker, string) (strategy.Lease, error)
	}{
		{"trylock", strategy.OpTryLock, func(l strategy.Locker, key string) (strategy.Lease, error) { return l.TryLock(ctx, key) }},
		{"lock", strategy.OpLock, func(l strategy.Locker, key string) (strategy.Lease, error) { return l.Lock(ctx, key) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, rec := observed(t, node.Pool(), strategy.Config{TTL: time.Minute})
			lease, err := tt.lock(l, tt.name)
			if err != nil {
				t.Fatalf("%s() = %v, want nil", tt.op, err)
			}
			if err := lease.Extend(ctx, 2*time.Minute); err != nil {
				t.Fatalf("Extend() = %v, want nil", err)
			}
			if err := lease.Unlock(ctx); err != nil {
				t.Fatalf("Unlock() = %v, want nil", err)
			}
			events := rec.For(tt.name)
			wantKinds(t, "uncontended", events, "acquired extended released")
			a, x, r := events[0].Acquired, events[1].Extended, events[2].Released
			if a.Technique != "lua_release" || a.Op != tt.op || a.Attempts != 1 || a.HandedOff || a.Wait <= 0 {
				t.Errorf("Acquired = %+v, want lua_release, Op %q, 1 attempt, not handed off, Wait > 0", a, tt.op)
			}
			if a.Token != lease.Token() || a.Fence != lease.Fence() || a.Fence == 0 {
				t.Errorf("Acquired Token, Fence = %q, %d; want the lease's %q, %d (> 0)", a.Token, a.Fence, lease.Token(), lease.Fence())
			}
			if x.TTL != 2*time.Minute || !x.Deadline.Equal(lease.Deadline()) || x.Held <= 0 {
				t.Errorf("Extended = %+v, want TTL 2m, Deadline %v (the lease's), Held > 0", x, lease.Deadline())
			}
			if r.NotHeld || r.PassedOn || r.Held < x.Held || r.Token != lease.Token() {
				t.Errorf("Released = %+v, want held, not passed on, Held >= %v (Extended's), Token %q", r, x.Held, lease.Token())
			}
		})
	}
}

// TestObserverContended: a Lock that waits for a lock another Locker holds
// until it expires reports Acquired after more than one attempt, with
// Wait at least until the expiry; the holder's late Unlock then reports
// Lost (not held, after its Deadline) and Released with NotHeld, and its
// Extend reports Lost and no Extended.
func TestObserverContended(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = 200 * time.Millisecond
	holder, hrec := observed(t, node.Pool(), strategy.Config{TTL: ttl})
	waiter, wrec := observed(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: noPolling})
	held, err := holder.Lock(ctx, "k")
	if err != nil {
		t.Fatalf("holder Lock() = %v, want nil", err)
	}
	start := time.Now()
	lease, err := waiter.Lock(ctx, "k") // woken by the holder's reported TTL
	if err != nil {
		t.Fatalf("waiter Lock() = %v, want nil", err)
	}
	waited := time.Since(start)
	t.Cleanup(func() { _ = lease.Unlock(context.Background()) })
	wantKinds(t, "waiter", wrec.Events(), "acquired")
	a := wrec.Events()[0].Acquired
	if a.Attempts < 2 || a.Wait <= 0 || a.Wait > waited || a.HandedOff || a.Token != lease.Token() {
		t.Errorf("waiter Acquired = %+v, want >= 2 attempts, Wait in (0, %v], not handed off, Token %q", a, waited, lease.Token())
	}
	hrec.Reset()

	if err := held.Extend(ctx, 0); !errors.Is(err, strategy.ErrNotHeld) {
		t.Fatalf("holder Extend() after expiry = %v, want %v", err, strategy.ErrNotHeld)
	}
	if err := held.Unlock(ctx); !errors.Is(err, strategy.ErrNotHeld) {
		t.Fatalf("holder Unlock() after expiry = %v, want %v", err, strategy.ErrNotHeld)
	}
	events := hrec.Events()
	wantKinds(t, "holder", events, "lost lost released")
	for i, op := range []string{strategy.OpExtend, strategy.OpUnlock} {
		e := events[i].Lost
		if e.Op != op || e.Reason != strategy.LostNotHeld || !errors.Is(e.Err, strategy.ErrNotHeld) || e.Late <= 0 || e.Held < ttl || e.Token != held.Token() {
			t.Errorf("holder Lost[%d] = %+v, want Op %q, %v, Err wrapping %v, Late > 0, Held >= %v, Token %q", i, e, op, strategy.LostNotHeld, strategy.ErrNotHeld, ttl, held.Token())
		}
	}
	if r := events[2].Released; !r.NotHeld || r.Held < ttl {
		t.Errorf("holder Released = %+v, want NotHeld, Held >= %v", r, ttl)
	}
}

// TestObserverNotAcquired: a TryLock of a held key reports NotAcquired,
// taken; a Lock whose ctx ends while the key is held reports it with the
// ctx as its reason and no Redis failure; on a killed node, TryLock
// reports unreachable, a Lock whose Retry policy stops reports
// unreachable with the last failure, and a Lock whose ctx ends reports
// ctx with the last failure.
func TestObserverNotAcquired(t *testing.T) {
	locktest.NoLeaks(t)
	nodes := redistest.Start(t, 2)
	live, dead := nodes[0], nodes[1]
	dead.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	holder := newLocker(t, live.Pool(), strategy.Config{TTL: time.Minute})
	if _, err := holder.Lock(ctx, "k"); err != nil {
		t.Fatalf("holder Lock() = %v, want nil", err)
	}
	tests := []struct {
		name        string
		node        *redistest.Node
		retry       strategy.Retry
		op          string
		want        strategy.Reason
		wantFailure bool // LastFailure set, and not only ctx's end
		wantErr     error
	}{
		{"trylock taken", live, nil, strategy.OpTryLock, strategy.ReasonTaken, false, strategy.ErrNotAcquired},
		{"lock ctx", live, nil, strategy.OpLock, strategy.ReasonContext, false, context.DeadlineExceeded},
		{"lock retries", live, strategy.NoRetry(), strategy.OpLock, strategy.ReasonTaken, false, strategy.ErrNotAcquired},
		{"trylock unreachable", dead, nil, strategy.OpTryLock, strategy.ReasonUnreachable, true, nil},
		{"lock retries unreachable", dead, strategy.NoRetry(), strategy.OpLock, strategy.ReasonUnreachable, true, strategy.ErrNotAcquired},
		{"lock ctx unreachable", dead, strategy.Fixed(10 * time.Millisecond), strategy.OpLock, strategy.ReasonContext, true, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, rec := observed(t, tt.node.Pool(), strategy.Config{TTL: time.Minute, Retry: tt.retry})
			cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer ccancel()
			var err error
			if tt.op == strategy.OpTryLock {
				_, err = l.TryLock(cctx, "k")
			} else {
				_, err = l.Lock(cctx, "k")
			}
			if err == nil {
				t.Fatalf("%s() = nil, want an error", tt.op)
			}
			wantKinds(t, tt.name, rec.Events(), "not-acquired")
			e := rec.Events()[0].NotAcquired
			if e.Op != tt.op || e.Reason != tt.want || e.Attempts < 1 || e.Wait <= 0 {
				t.Errorf("NotAcquired = %+v, want Op %q, Reason %v, >= 1 attempt, Wait > 0", e, tt.op, tt.want)
			}
			if e.Err == nil || e.Err.Error() != err.Error() {
				t.Errorf("NotAcquired Err = %v, want the call's error %v", e.Err, err)
			}
			if tt.wantErr != nil && !errors.Is(e.Err, tt.wantErr) {
				t.Errorf("NotAcquired Err = %v, want it to wrap %v", e.Err, tt.wantErr)
			}
			// An attempt that ctx's end cut short counts as a failure when
			// there was no other.
			failed := e.LastFailure != nil && !errors.Is(e.LastFailure, context.DeadlineExceeded)
			if tt.wantFailure && e.LastFailure == nil || !tt.wantFailure && failed {
				t.Errorf("NotAcquired LastFailure = %v, want a Redis failure %v", e.LastFailure, tt.wantFailure)
			}
		})
	}
}

// TestObserverHandOff: B, in another Locker, waits in the key's line and
// attempts often, so A's release in Redis hands the lock to it: B reports
// HandedOff (not local) and then Acquired, handed off; A reports Released,
// not passed on (the hand-off was Redis's, not A's Locker's).
func TestObserverHandOff(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	la, arec := observed(t, node.Pool(), strategy.Config{TTL: time.Minute})
	lb, brec := observed(t, node.Pool(), strategy.Config{TTL: time.Minute, Retry: strategy.Fixed(5 * time.Millisecond)})
	a, b := handOver(ctx, t, node, la, lb, nil)
	wantKinds(t, "A", arec.Events(), "acquired released")
	if r := arec.Events()[1].Released; r.PassedOn || r.NotHeld {
		t.Errorf("A Released = %+v, want not passed on, held", r)
	}
	events := brec.Events()
	wantKinds(t, "B", events, "handed-off acquired")
	h, got := events[0].HandedOff, events[1].Acquired
	if h.Local || h.Token != b.Token() || h.Fence != a.Fence()+1 || h.Attempts < 1 || h.Wait <= 0 {
		t.Errorf("B HandedOff = %+v, want not local, Token %q, Fence %d, >= 1 attempt, Wait > 0", h, b.Token(), a.Fence()+1)
	}
	if !got.HandedOff || got.Token != b.Token() || got.Attempts != h.Attempts {
		t.Errorf("B Acquired = %+v, want handed off, Token %q, Attempts %d (HandedOff's)", got, b.Token(), h.Attempts)
	}
}

// TestObserverSharedByLockers: one Observer may serve several Lockers;
// events name their technique.
func TestObserverSharedByLockers(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec := &locktest.Recorder{}
	for _, key := range []string{"a", "b"} {
		l, err := luarelease.New(node.Pool(), strategy.Config{Observer: rec})
		if err != nil {
			t.Fatalf("New() = %v, want nil", err)
		}
		locktest.CloseOnCleanup(t, l)
		lease, err := l.Lock(ctx, key)
		if err != nil {
			t.Fatalf("Lock(%q) = %v, want nil", key, err)
		}
		if err := lease.Unlock(ctx); err != nil {
			t.Fatalf("Unlock(%q) = %v, want nil", key, err)
		}
	}
	wantKinds(t, "shared", rec.Events(), "acquired released acquired released")
	for _, e := range rec.Events() {
		if e.Kind == locktest.KindAcquired && e.Acquired.Technique != "lua_release" {
			t.Errorf("Acquired Technique = %q, want %q", e.Acquired.Technique, "lua_release")
		}
	}
}

// BenchmarkLockUnlockObserved is BenchmarkLockUnlock without an observer
// ("nil") and with one that does nothing ("nop"), in one run: compare
// their rows.
func BenchmarkLockUnlockObserved(b *testing.B) {
	node := redistest.Start(b, 1)[0]
	for _, o := range []struct {
		name string
		obs  strategy.Observer
	}{{"nil", nil}, {"nop", strategy.NopObserver{}}} {
		b.Run(o.name, func(b *testing.B) {
			l, err := luarelease.New(node.Pool(), strategy.Config{TTL: 10 * time.Second, Observer: o.obs})
			if err != nil {
				b.Fatalf("New() = %v, want nil", err)
			}
			locktest.CloseOnCleanup(b, l)
			locktest.BenchLockUnlock(b, l)
		})
	}
}

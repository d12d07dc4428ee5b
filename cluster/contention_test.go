package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/cluster"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// Contention workload sizes: the 64 keys, 4 Lockers × 4 goroutines.
const (
	contendedKeys = 64
	lockers       = 4
	perLocker     = 4
)

// lockName is the Redis key lua_release keeps the lock name under.
func lockName(name string) string { return protocol.LockKey("lock:", name) }

// spreadN returns n keys named prefix + i, as evenly over c's masters as
// n allows, by the slot of name(key).
func spreadN(t testing.TB, c *redistest.Cluster, prefix string, n int, name func(string) string) []string {
	t.Helper()
	masters := len(c.Masters())
	per := (n + masters - 1) / masters
	count := map[string]int{}
	var keys []string
	for i := 0; len(keys) < n; i++ {
		require.Less(t, i, 100000, "no spread of %d keys found", n)
		k := fmt.Sprintf("%s%d", prefix, i)
		addr := c.NodeFor(name(k)).Addr()
		if count[addr] < per {
			count[addr]++
			keys = append(keys, k)
		}
	}
	return keys
}

// tally is what a contention run saw.
type tally struct {
	mu         sync.Mutex
	fence      map[string]uint64 // the last fence per key
	inside     map[string]*atomic.Int32
	counter    map[string]*atomic.Int64 // incremented without atomicity inside the lock
	handOffs   map[string]int           // per master address
	overlaps   atomic.Int64
	done       atomic.Int64 // critical sections completed
	lockFails  []error
	unlockErr  []error
	notHeld    atomic.Int64
	notHeldErr []error // the Unlocks that found the lock lost at their first try
	// releasedBefore counts Unlocks that found the lock gone after a try
	// that failed as one that may have run.
	releasedBefore atomic.Int64
	// unlockRetries counts Unlocks that failed and were tried again.
	unlockRetries atomic.Int64
	fenceErr      []string
}

func newTally(keys []string) *tally {
	t := &tally{fence: map[string]uint64{}, inside: map[string]*atomic.Int32{}, counter: map[string]*atomic.Int64{}, handOffs: map[string]int{}}
	for _, k := range keys {
		t.inside[k], t.counter[k] = new(atomic.Int32), new(atomic.Int64)
	}
	return t
}

// handOffObserver counts hand-offs per master of the key.
type handOffObserver struct {
	strategy.NopObserver
	p *cluster.Pool
	t *tally
}

func (o handOffObserver) HandedOff(_ context.Context, e strategy.HandOffEvent) {
	addr, _ := o.p.MasterOf(lockName(e.Key))
	o.t.mu.Lock()
	o.t.handOffs[addr]++
	o.t.mu.Unlock()
}

// newLockers returns the run's lua_release Lockers over p, closed when
// the test ends.
func newLockers(t *testing.T, p *cluster.Pool, tl *tally) []strategy.Locker {
	t.Helper()
	var ls []strategy.Locker
	for range lockers {
		l, err := luarelease.New(p, strategy.Config{TTL: 10 * time.Second, Observer: handOffObserver{p: p, t: tl}})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		ls = append(ls, l)
	}
	return ls
}

// contend runs perLocker goroutines on each of ls over keys until stop is
// closed and each made at least minRounds critical sections.
func (tl *tally) contend(ls []strategy.Locker, keys []string, minRounds int, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for _, l := range ls {
		for range perLocker {
			wg.Go(func() {
				for round := 0; ; round++ {
					if round >= minRounds {
						select {
						case <-stop:
							return
						default:
						}
					}
					tl.section(l, keys[rand.IntN(len(keys))])
				}
			})
		}
	}
	wg.Wait()
}

// section locks key, checks and bumps its counter and fence, and
// unlocks it, recording what went wrong.
func (tl *tally) section(l strategy.Locker, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := l.Lock(ctx, key)
	if err != nil {
		tl.mu.Lock()
		tl.lockFails = append(tl.lockFails, err)
		tl.mu.Unlock()
		return
	}
	if tl.inside[key].Add(1) > 1 {
		tl.overlaps.Add(1)
	}
	tl.mu.Lock()
	if f := lease.Fence(); l.Properties().Fencing && f <= tl.fence[key] {
		tl.fenceErr = append(tl.fenceErr, fmt.Sprintf("%s: fence %d after %d", key, f, tl.fence[key]))
	} else {
		tl.fence[key] = f
	}
	tl.mu.Unlock()
	n := tl.counter[key].Load() // a read-modify-write the lock alone protects
	time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
	tl.counter[key].Store(n + 1)
	tl.done.Add(1)
	tl.inside[key].Add(-1)
	var last error // the failure before this try
	for {
		// A failed Unlock spends nothing: it is retried (through a
		// failover, until the promoted replica answers) until ctx ends.
		err := lease.Unlock(ctx)
		switch {
		case err == nil:
			return
		case errors.Is(err, strategy.ErrNotHeld) && last != nil:
			// An earlier try failed as one that may have run (a
			// connection that failed or passed its deadline under
			// load): it did, and released the lock.
			tl.releasedBefore.Add(1)
			return
		case errors.Is(err, strategy.ErrNotHeld):
			tl.notHeld.Add(1)
			tl.mu.Lock()
			tl.notHeldErr = append(tl.notHeldErr, err)
			tl.mu.Unlock()
			return
		case ctx.Err() != nil:
			tl.mu.Lock()
			tl.unlockErr = append(tl.unlockErr, err)
			tl.mu.Unlock()
			return
		}
		last = err
		tl.unlockRetries.Add(1)
		time.Sleep(20 * time.Millisecond)
	}
}

// check asserts mutual exclusion and the fences of a run with no fault.
func (tl *tally) check(t *testing.T) {
	t.Helper()
	var sum int64
	for _, c := range tl.counter {
		sum += c.Load()
	}
	assert.Zero(t, tl.overlaps.Load(), "overlapping holders")
	assert.Equal(t, tl.done.Load(), sum, "updates counted against critical sections (lost updates)")
	assert.Empty(t, tl.fenceErr, "fences that did not increase")
	assert.Empty(t, tl.lockFails, "Lock calls that failed")
	assert.Empty(t, tl.unlockErr, "Unlock calls that failed")
	assert.Zero(t, tl.notHeld.Load(), "Unlocks that found the lock lost at their first try: %v", tl.notHeldErr)
}

// testContentionAcrossMasters: 64 keys over every master, 4 Lockers × 4
// goroutines on one Pool, lua_release. No two holders at once, no lost
// update, fences increase per key, and every master both hands locks
// off and sends notices on shard channels (SPUBLISH, never PUBLISH).
func testContentionAcrossMasters(t *testing.T, c *redistest.Cluster, p *cluster.Pool) {
	keys := spreadN(t, c, "ct:", contendedKeys, lockName)
	publish := commandCalls(t, c, "publish")
	tl := newTally(keys)
	stop := make(chan struct{})
	close(stop)
	tl.contend(newLockers(t, p, tl), keys, 60, stop)
	tl.check(t)
	t.Logf("%d critical sections, hand-offs per master %v; %s", tl.done.Load(), tl.handOffs, tl.retries())
	for _, m := range c.Masters() {
		assert.Positive(t, tl.handOffs[m.Addr()], "hand-offs on master %s", m.Addr())
		assert.Positive(t, masterCalls(t, m, "spublish"), "SPUBLISH notices on master %s", m.Addr())
	}
	assert.Equal(t, publish, commandCalls(t, c, "publish"), "classic PUBLISH calls on the masters")
}

// retries says how many Unlocks were tried again, and how many of those
// found that an earlier try had released the lock.
func (tl *tally) retries() string {
	return fmt.Sprintf("%d Unlock tries repeated, %d found the lock released by an earlier try", tl.unlockRetries.Load(), tl.releasedBefore.Load())
}

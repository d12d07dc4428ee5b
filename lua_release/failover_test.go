package luarelease_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// failoverRunsEnv sets how many failovers TestFailoverUnderContention runs
// per setting (default 1; the check is 10).
const failoverRunsEnv = "LOCKZOO_FAILOVER_RUNS"

// Failover scenario sizes: 4 Lockers, 8 goroutines, 3 keys.
const (
	failoverLockers    = 4
	failoverGoroutines = 8
	failoverTTL        = time.Second
	failoverBefore     = 400 * time.Millisecond // locking before the replicas lag
	failoverLag        = 150 * time.Millisecond // the replicas lag, then the primary dies
	failoverAfter      = 700 * time.Millisecond // locking after locking resumed
	failoverHold       = 50 * time.Millisecond  // each critical section's work
	// failoverRest bounds a goroutine's rest between sections, so that a
	// key is often free when the replicas start to lag.
	failoverRest = 200 * time.Millisecond
	// failoverLinger is how long a section begun while the replicas lag
	// works on after the clients were re-pointed, as a long job does.
	failoverLinger = 200 * time.Millisecond
)

var failoverKeys = []string{"a", "b", "c"}

// failoverUnwaited is how many replicas the primary has when the Lockers
// wait for none: as many as with Replicas = 2, so that the two settings
// differ in nothing else.
const failoverUnwaited = 3

// TestFailoverUnderContention kills the primary of a primary with
// Replicas+1 replicas (3 with Replicas = 0) while 8 goroutines of 4
// Lockers contend for 3 keys, promotes the most up-to-date replica
// (REPLICAOF NO ONE, as Sentinel would), re-points the other replicas at it
// all at once (Adopt, as Sentinel with parallel-syncs at every replica)
// and the clients too, and leaves the old primary dead: the promoted one
// still has the Replicas its Lockers wait for. The replicas lag for the
// last failoverLag before the death (frozen, their links cut: on one host
// replication is otherwise too quick to lose anything), which is the
// failover that loses locks; sections begun then hold their lock until
// failoverLinger after the clients were re-pointed, so that a lost lock
// shows as two holders. With Replicas = 2 no two holders of a key
// overlap and no update is lost; with Replicas = 0 the overlaps found are
// reported (the Locker does not claim NodeFaultTolerant then). With
// either, a probe that locks a key of its own from the death on gets it
// within the promotion's time plus as long again, at least a second.
func TestFailoverUnderContention(t *testing.T) {
	runs := 1
	if s := os.Getenv(failoverRunsEnv); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "%s=%q", failoverRunsEnv, s)
		runs = n
	}
	for _, replicas := range []int{2, 0} {
		t.Run("replicas="+strconv.Itoa(replicas), func(t *testing.T) {
			var total failoverResult
			var resumed []time.Duration // after the promotion
			for i := range runs {
				t.Run("run "+strconv.Itoa(i+1), func(t *testing.T) {
					r := failoverRun(t, replicas)
					t.Logf("%d sections, %d overlaps, %d lost updates, %d failed Locks; promoted %v after the primary died, the probe locked %v after that",
						r.sections, r.overlaps, r.lost, r.failed, r.promoted, r.resumed-r.promoted)
					bound := strategytest.Failover{Promoted: r.promoted}.ResumeBound()
					assert.LessOrEqual(t, r.resumed, bound, "the probe locked %v after the death, want at most %v (promoted after %v)", r.resumed, bound, r.promoted)
					total.add(r)
					resumed = append(resumed, r.resumed-r.promoted)
				})
			}
			t.Logf("%d runs, Replicas %d: %d sections, %d overlaps, %d lost updates, %d runs with either; the probe locked %v to %v after the promotion",
				runs, replicas, total.sections, total.overlaps, total.lost, total.violated, slices.Min(resumed), slices.Max(resumed))
			if replicas == 0 {
				return // reported, not judged: the Locker does not claim it
			}
			assert.Zero(t, total.overlaps, "overlapping holders over %d failovers with Replicas %d", runs, replicas)
			assert.Zero(t, total.lost, "lost updates over %d failovers with Replicas %d", runs, replicas)
		})
	}
}

type failoverResult struct {
	sections, overlaps, lost, failed int64
	violated                         int // runs with an overlap or a lost update
	// promoted and resumed are from the primary's death: to the
	// promotion, and to the probe's Lock.
	promoted, resumed time.Duration
}

func (r *failoverResult) add(o failoverResult) {
	r.sections += o.sections
	r.overlaps += o.overlaps
	r.lost += o.lost
	r.failed += o.failed
	if o.overlaps > 0 || o.lost > 0 {
		r.violated++
	}
}

// primaryPool lends connections of whichever node is the primary now: the
// clients re-pointed at the promoted replica.
type primaryPool struct {
	cur atomic.Pointer[redistest.Node]
}

func (p *primaryPool) GetContext(ctx context.Context) (redis.Conn, error) {
	return p.cur.Load().Pool().GetContext(ctx)
}

// held is one critical section: from Lock's return to Unlock's call,
// cut at the lease's Deadline.
type held struct {
	key      string
	from, to time.Time
}

// failoverRun runs the scenario once with Config.Replicas replicas.
func failoverRun(t *testing.T, replicas int) failoverResult {
	t.Helper()
	locktest.NoLeaks(t)
	n := failoverUnwaited
	if replicas > 0 {
		n = replicas + 1
	}
	primary, reps := redistest.StartReplicated(t, n)
	primary.AwaitAcks(len(reps))
	pool := &primaryPool{}
	pool.cur.Store(primary)
	cfg := strategy.Config{TTL: failoverTTL, Replicas: replicas}
	var lockers []strategy.Locker
	for range failoverLockers {
		lockers = append(lockers, newLocker(t, pool, cfg))
	}
	probe := newLocker(t, pool, cfg)
	if replicas == 0 {
		require.False(t, lockers[0].Properties().NodeFaultTolerant, "NodeFaultTolerant claimed with Replicas 0")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu       sync.Mutex
		sections []held
		counters [3]atomic.Int64 // per key, updated only under its lock
		done     atomic.Int64
		failed   atomic.Int64
		wg       sync.WaitGroup
		lagging  = make(chan struct{}) // closed when the replicas start to lag
		over     = make(chan struct{}) // closed when the clients are re-pointed
	)
	for g := range failoverGoroutines {
		wg.Add(1)
		go func() { // ends when ctx is cancelled
			defer wg.Done()
			l := lockers[g%failoverLockers]
			for ctx.Err() == nil {
				k := rand.IntN(len(failoverKeys))
				lctx, lcancel := context.WithTimeout(ctx, time.Second)
				lease, err := l.Lock(lctx, failoverKeys[k])
				lcancel()
				if err != nil {
					failed.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				from := time.Now()
				v := counters[k].Load()
				work(lagging, over, lease.Deadline())
				counters[k].Store(v + 1)
				done.Add(1)
				to := time.Now()
				if dl := lease.Deadline(); dl.Before(to) {
					to = dl // past its Deadline the lease promises nothing
				}
				mu.Lock()
				sections = append(sections, held{key: failoverKeys[k], from: from, to: to})
				mu.Unlock()
				uctx, ucancel := context.WithTimeout(context.Background(), time.Second)
				_ = lease.Unlock(uctx) // fails while the primary is dead: its lock expires
				ucancel()
				// Some time off between sections, so that a key is
				// sometimes free: a lock taken on a free key while the
				// replicas lag is the one a failover loses.
				time.Sleep(rand.N(failoverRest))
			}
		}()
	}

	time.Sleep(failoverBefore)
	for _, r := range reps {
		r.Pause()
		t.Cleanup(r.Resume)
	}
	close(lagging)
	_, err := primary.Do("CLIENT", "KILL", "TYPE", "replica")
	require.NoError(t, err, "cut the replicas' links")
	time.Sleep(failoverLag)
	kill := time.Now()
	primary.Kill()
	resumed := make(chan time.Time, 1)
	wg.Add(1)
	go func() { // ends at its first Lock, or when ctx is cancelled
		defer wg.Done()
		probeLock(ctx, probe, resumed)
	}()
	for _, r := range reps {
		r.Resume()
	}
	best := 0
	var offsets []int64
	for i, r := range reps {
		o, err := r.ReplOffset()
		require.NoError(t, err)
		offsets = append(offsets, o)
		if o > offsets[best] {
			best = i
		}
	}
	promoted := reps[best]
	promoted.Promote()
	pool.cur.Store(promoted)
	r := failoverResult{promoted: time.Since(kill)}
	close(over)
	promoted.Adopt(slices.Delete(slices.Clone(reps), best, best+1)...)
	t.Logf("replica %d of %d (offsets %v) promoted and the clients re-pointed at it %v after the primary died, the others following it %v after",
		best+1, len(reps), offsets, r.promoted, time.Since(kill))
	select {
	case at := <-resumed:
		r.resumed = at.Sub(kill)
	case <-time.After(10 * time.Second):
		r.resumed = time.Since(kill)
		t.Errorf("the probe locked nothing within %v of the primary's death", r.resumed)
	}
	time.Sleep(failoverAfter)
	cancel()
	wg.Wait()

	r.sections, r.failed = done.Load(), failed.Load()
	var sum int64
	for i := range counters {
		sum += counters[i].Load()
	}
	r.lost = r.sections - sum
	r.overlaps = overlaps(sections)
	return r
}

// work is a section's work, begun now: failoverHold or, when it begins
// while the replicas lag and before the clients are re-pointed, until
// failoverLinger after that; never past deadline less failoverHold, so
// that its update comes before its lease ends.
func work(lagging, over <-chan struct{}, deadline time.Time) {
	stopAt := deadline.Add(-failoverHold)
	end := time.Now().Add(failoverHold)
	select {
	case <-over:
	case <-lagging:
		timer := time.NewTimer(time.Until(stopAt))
		defer timer.Stop()
		select {
		case <-over:
			end = time.Now().Add(failoverLinger)
		case <-timer.C:
		}
	default:
	}
	if stopAt.Before(end) {
		end = stopAt
	}
	time.Sleep(time.Until(end))
}

// probeLock tries to lock a key no one else locks until it succeeds (and
// unlocks it), and sends when it did; it returns then or when ctx ends.
func probeLock(ctx context.Context, l strategy.Locker, resumed chan<- time.Time) {
	for ctx.Err() == nil {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		lease, err := l.TryLock(lctx, "probe")
		cancel()
		if err == nil {
			resumed <- time.Now()
			uctx, ucancel := context.WithTimeout(context.Background(), time.Second)
			_ = lease.Unlock(uctx)
			ucancel()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// overlaps counts the sections that began, on their key, before an
// earlier section on that key ended.
func overlaps(sections []held) int64 {
	slices.SortFunc(sections, func(a, b held) int { return a.from.Compare(b.from) })
	var n int64
	end := map[string]time.Time{}
	for _, s := range sections {
		if e, ok := end[s.key]; ok && s.from.Before(e) {
			n++
		}
		if s.to.After(end[s.key]) {
			end[s.key] = s.to
		}
	}
	return n
}

// TestOverlaps checks the overlap count of TestFailoverUnderContention.
func TestOverlaps(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		in   []held
		want int64
	}{
		{"none", []held{{"a", at(0), at(10)}, {"a", at(10), at(20)}, {"b", at(5), at(15)}}, 0},
		{"one", []held{{"a", at(0), at(10)}, {"a", at(9), at(20)}}, 1},
		{"inside a long one", []held{{"a", at(0), at(100)}, {"a", at(10), at(20)}, {"a", at(30), at(40)}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, overlaps(tc.in))
		})
	}
}

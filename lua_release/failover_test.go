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
)

var failoverKeys = []string{"a", "b", "c"}

// TestFailoverUnderContention kills the primary of a primary with 2
// replicas while 8 goroutines of 4 Lockers contend for 3 keys, promotes
// the most up-to-date replica (REPLICAOF NO ONE, as Sentinel would),
// re-points the other replica and the clients at it, and brings the old
// primary back as a replica. The replicas lag for the last failoverLag
// before the death (frozen, their links cut: on one host replication is
// otherwise too quick to lose anything), which is the failover that loses
// locks. With Replicas = 2 no two holders of a key overlap and no update
// is lost; with Replicas = 0 the overlaps found are reported (the Locker
// does not claim NodeFaultTolerant then).
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
			for i := range runs {
				t.Run("run "+strconv.Itoa(i+1), func(t *testing.T) {
					r := failoverRun(t, replicas)
					t.Logf("%d sections, %d overlaps, %d lost updates, %d failed Locks; locking resumed %v after the primary died",
						r.sections, r.overlaps, r.lost, r.failed, r.resumed)
					total.add(r)
				})
			}
			t.Logf("%d runs, Replicas %d: %d sections, %d overlaps, %d lost updates", runs, replicas, total.sections, total.overlaps, total.lost)
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
	resumed                          time.Duration
}

func (r *failoverResult) add(o failoverResult) {
	r.sections += o.sections
	r.overlaps += o.overlaps
	r.lost += o.lost
	r.failed += o.failed
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
	primary := redistest.Start(t, 1)[0]
	reps := []*redistest.Node{primary.StartReplica(), primary.StartReplica()}
	primary.AwaitAcks(len(reps))
	pool := &primaryPool{}
	pool.cur.Store(primary)
	cfg := strategy.Config{TTL: failoverTTL, Replicas: replicas}
	var lockers []strategy.Locker
	for range failoverLockers {
		lockers = append(lockers, newLocker(t, pool, cfg))
	}
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
		killedAt atomic.Pointer[time.Time]
		resumed  = make(chan time.Time, failoverGoroutines)
		wg       sync.WaitGroup
	)
	for g := range failoverGoroutines {
		wg.Add(1)
		go func() { // ends when ctx is cancelled
			defer wg.Done()
			l := lockers[g%failoverLockers]
			for ctx.Err() == nil {
				k := rand.IntN(len(failoverKeys))
				began := time.Now()
				lctx, lcancel := context.WithTimeout(ctx, time.Second)
				lease, err := l.Lock(lctx, failoverKeys[k])
				lcancel()
				if err != nil {
					failed.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				from := time.Now()
				if k := killedAt.Load(); k != nil && began.After(*k) {
					select {
					case resumed <- from:
					default: // the first is what counts
					}
				}
				v := counters[k].Load()
				time.Sleep(failoverHold)
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
				time.Sleep(rand.N(failoverHold))
			}
		}()
	}

	time.Sleep(failoverBefore)
	for _, r := range reps {
		r.Pause()
		t.Cleanup(r.Resume)
	}
	_, err := primary.Do("CLIENT", "KILL", "TYPE", "replica")
	require.NoError(t, err, "cut the replicas' links")
	time.Sleep(failoverLag)
	kill := time.Now()
	killedAt.Store(&kill)
	primary.Kill()
	for _, r := range reps {
		r.Resume()
	}
	best, other := reps[0], reps[1]
	o0, err0 := reps[0].ReplOffset()
	o1, err1 := reps[1].ReplOffset()
	require.NoError(t, err0)
	require.NoError(t, err1)
	if o1 > o0 {
		best, other = reps[1], reps[0]
	}
	best.Promote()
	pool.cur.Store(best)
	t.Logf("clients re-pointed at the promoted replica %v after the primary died", time.Since(kill))
	other.Follow(best)
	primary.Restart()
	primary.Follow(best)
	var first time.Time
	select {
	case first = <-resumed:
	case <-time.After(10 * time.Second):
		t.Errorf("no Lock succeeded within 10s of the primary's death")
	}
	time.Sleep(failoverAfter)
	cancel()
	wg.Wait()

	r := failoverResult{sections: done.Load(), failed: failed.Load()}
	if !first.IsZero() {
		r.resumed = first.Sub(kill)
	}
	var sum int64
	for i := range counters {
		sum += counters[i].Load()
	}
	r.lost = r.sections - sum
	r.overlaps = overlaps(sections)
	return r
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

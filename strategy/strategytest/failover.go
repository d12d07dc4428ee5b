package strategytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// The sentinel-failover scenario's run: issue 31's 4 Lockers, 8
// goroutines and 3 keys, a few seconds in all.
const (
	failoverLockers     = 4
	failoverWorkers     = 2 // per Locker
	failoverTTL         = 10 * time.Second
	failoverLockTimeout = time.Second
	failoverBefore      = 400 * time.Millisecond // contention before the replicas lag
	failoverLag         = 300 * time.Millisecond // the replicas lag, then the primary dies
	// failoverLong: a section of the first key that begins this long
	// before the replicas lag holds its lock through the failover.
	failoverLong   = 150 * time.Millisecond
	failoverHold   = 50 * time.Millisecond   // a short section's work
	failoverLinger = 1500 * time.Millisecond // a long section's work after the failover: past a waiting Lock's timeout
	failoverAfter  = 2 * time.Second         // contention once locking resumed, past the long sections
	failoverPause  = 20 * time.Millisecond   // a worker's pause after a failed Lock
	// failoverRest bounds a worker's rest between sections: a key is often
	// free when the replicas start to lag, so that a lock taken then is
	// lost with nothing else (an unreplicated release) in its place.
	failoverRest = 300 * time.Millisecond
)

// failoverKeys are the locks the workers contend for.
var failoverKeys = []string{"a", "b", "c"}

// sentinelFailoverScenario: Lockers contend for keys through
// sentinel.Pools while the Sentinels fail a dead primary over. It is
// black-box (no fault point), so an unclaimed NodeFaultTolerant is
// reported, not judged.
func sentinelFailoverScenario() scenario {
	return scenario{name: "sentinel-failover", property: "NodeFaultTolerant", managed: true, blackBox: true, sentinel: true,
		claimed: func(p strategy.Properties) bool { return p.NodeFaultTolerant }, run: sentinelFailover}
}

// failoverRun is one sentinel-failover run's state.
type failoverRun struct {
	e       *env
	counter strategy.Pool // a healthy node apart from the deployment
	killAt  time.Time     // when the primary is to die
	// failedOver is closed (over) once the Sentinels name the promoted
	// replica, or the scenario ends.
	failedOver chan struct{}
	overOnce   sync.Once

	mu        sync.Mutex
	sections  []heldKey
	completed map[string]int // sections whose counter write succeeded, per key

	failed, notReplicated, longs atomic.Int64
	// probeErr is the error of the probe's latest Lock that failed, for
	// the message of a scenario whose locking did not resume.
	probeErr atomic.Pointer[error]
}

// heldKey is one critical section on key, cut at its lease's Deadline.
type heldKey struct {
	who, key string
	from, to time.Time
}

// sentinelFailover: a primary with replicas under 3 Sentinels; 4 Lockers,
// each over a sentinel.Pool of its own as a process would have, run 2
// workers each that lock one of 3 keys, read its counter on a separate
// healthy node, work, write it back plus one and unlock. The replicas then
// lag (frozen, their links cut: on one host replication is otherwise too
// quick for a failover to lose anything) for failoverLag, and the primary
// dies; the replicas thaw and the Sentinels promote one. Sections that
// began while the replicas lag, and those of the first key that began
// just before, hold their lock through the failover, as a long job does
// (long). Two sections of a key at once and lost counter updates are
// violations. r.Failover says when the
// Sentinels named the promoted replica and when locking resumed (a probe
// locking a free key), both from the death; locking must resume within
// Failover.ResumeBound (counted, for Lockers that wait for replicas, from
// when the promoted primary has them: Failover.Followed), else the
// scenario fails. The primary has one
// replica more than the Lockers wait for (sentinelEnv), the Sentinels
// re-point every surviving replica at once (parallel-syncs), and the old
// primary stays dead.
func sentinelFailover(ctx context.Context, e *env, r *Result) {
	f := &failoverRun{e: e, failedOver: make(chan struct{}), completed: map[string]int{}}
	f.counter = e.traced(redistest.Start(e.tb, 1)[0].Pool(), "counter")
	var lockers []strategy.Locker
	for range failoverLockers + 1 { // the last is the probe's
		pool, err := e.sentinelPool()
		if err != nil {
			fail(r, "sentinel.New", err)
			return
		}
		l, err := e.lockerOn([]strategy.Pool{e.traced(pool, "")}, strategy.Config{TTL: failoverTTL})
		if err != nil {
			fail(r, "build", err)
			return
		}
		lockers = append(lockers, l)
	}
	probeLocker := lockers[failoverLockers]
	lockers = lockers[:failoverLockers]
	s := e.sentinel
	s.AwaitReady()
	replicas := s.Nodes()[1:]
	e.rec.note("", "%d Lockers x %d workers contend for keys %v (TTL %v) through sentinel.Pools; the primary has %d replica(s), 3 Sentinels watch it",
		failoverLockers, failoverWorkers, failoverKeys, failoverTTL, len(replicas))

	workCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { f.over(); stop(); wg.Wait() }() // also when the harness ends the scenario (Fatalf)
	errs := make(chan error, failoverLockers*failoverWorkers)
	f.killAt = time.Now().Add(failoverBefore + failoverLag)
	for li, l := range lockers {
		for w := range failoverWorkers {
			who := fmt.Sprintf("locker %d/worker %d", li+1, w+1)
			rng := rand.New(rand.NewPCG(uint64(li), uint64(w)))
			wg.Go(func() {
				if err := f.work(workCtx, l, who, rng); err != nil {
					errs <- err
				}
			})
		}
	}
	if !sleepCtx(ctx, failoverBefore) {
		fail(r, "contend", ctx.Err())
		return
	}
	for _, n := range replicas {
		n.Pause()
		e.tb.Cleanup(n.Resume)
	}
	if _, err := e.do(ctx, 0, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		fail(r, "cut the replicas' links", err)
		return
	}
	e.rec.note("", "the replicas lag: frozen, their links cut")
	sleepCtx(ctx, time.Until(f.killAt))
	primary := e.nodes[0]
	primary.Kill()
	killed := time.Now()
	for _, n := range replicas {
		n.Resume()
	}
	e.rec.note("", "the primary dies; the replicas thaw")
	resumed := make(chan time.Time, 1)
	wg.Go(func() { f.probe(workCtx, probeLocker, resumed) })
	promoted := s.WaitFailover(primary)
	fo := &Failover{Promoted: time.Since(killed)}
	e.rec.note("", "every Sentinel names %s the master, %v after the death", promoted.Addr(), fo.Promoted.Round(time.Millisecond))
	if k := e.target.Replicas; k > 0 {
		if err := promoted.AcksWithin(ctx, k, followWithin); err != nil {
			fail(r, "replicas follow the promoted one", err)
			return
		}
		fo.Followed = time.Since(killed)
		e.rec.note("", "%d replica(s) acknowledge %s's writes, %v after the death", k, promoted.Addr(), fo.Followed.Round(time.Millisecond))
	}
	f.over()
	var resumedAt time.Time
	select {
	case resumedAt = <-resumed:
	case <-time.After(time.Until(killed.Add(fo.ResumeBound()))):
		fail(r, "resume", fmt.Errorf("no Lock of a free key succeeded within %v of the primary's death (promotion after %v; the probe's last Lock: %v; on %s: %s)",
			fo.ResumeBound().Round(time.Millisecond), fo.Promoted.Round(time.Millisecond), f.lastProbeErr(), promoted.Addr(), probeKeys(promoted)))
		return
	case <-ctx.Done():
		fail(r, "resume", ctx.Err())
		return
	}
	fo.Resumed = resumedAt.Sub(killed)
	r.Failover = fo
	sleepCtx(ctx, failoverAfter)
	stop()
	wg.Wait()
	close(errs)
	if err := errors.Join(drainErrs(errs)...); err != nil {
		fail(r, "worker", err)
		return
	}
	f.judge(ctx, r)
	r.Account += fmt.Sprintf("; the Sentinels named the promoted replica %v after the primary died, locking resumed %v after it",
		fo.Promoted.Round(time.Millisecond), fo.Resumed.Round(time.Millisecond))
	if fo.Followed > 0 {
		r.Account += fmt.Sprintf(" (enough replicas followed the promoted one %v after the death)", fo.Followed.Round(time.Millisecond))
	}
}

// followWithin bounds the wait for the surviving replicas to follow the
// promoted primary. The Sentinels re-point them at once, but one they
// could not re-point within failover-timeout (a loaded machine) they
// re-point only at their next check, about 10 s later.
const followWithin = 30 * time.Second

// work is one worker: until ctx ends, it locks a key drawn from rng,
// runs its section and unlocks. Its error is the counter node's.
func (f *failoverRun) work(ctx context.Context, l strategy.Locker, who string, rng *rand.Rand) error {
	named := as(ctx, who)
	for ctx.Err() == nil {
		key := failoverKeys[rng.IntN(len(failoverKeys))]
		lctx, cancel := context.WithTimeout(named, failoverLockTimeout)
		lease, err := l.Lock(lctx, key)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				f.failed.Add(1)
				if errors.Is(err, strategy.ErrNotReplicated) {
					f.notReplicated.Add(1)
				}
			}
			sleepCtx(ctx, failoverPause)
			continue
		}
		err = f.section(named, who, lease)
		// Retried until answered or past the lease's Deadline: the
		// primary may be dead meanwhile.
		_ = unlock(context.WithoutCancel(named), lease)
		if err != nil {
			return err
		}
		sleepCtx(ctx, time.Duration(rng.Int64N(int64(failoverRest))))
	}
	return nil
}

// section reads the key's counter, works, and writes it back plus one, as
// long as the lease's Deadline is ahead. A long section works until
// failoverLinger after the failover.
func (f *failoverRun) section(ctx context.Context, who string, lease strategy.Lease) error {
	ctx = context.WithoutCancel(ctx) // the end of the run does not cut a section short
	from, deadline := time.Now(), lease.Deadline()
	if !from.Before(deadline) {
		return nil // expired on return: the holder does not enter
	}
	counter := f.e.prefix + "failover-counter:" + lease.Key()
	n, err := redis.Int(f.counterDo(ctx, "GET", counter))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return fmt.Errorf("%s: counter of %s: %w", who, lease.Key(), err)
	}
	stopAt := deadline.Add(-failoverHold) // the write must come before the Deadline
	end := from.Add(failoverHold)
	if f.long(lease.Key(), from) {
		f.longs.Add(1)
		f.e.rec.note(who, "%s holds %s through the failover, as a long job does", who, lease.Key())
		select {
		case <-f.failedOver:
			end = time.Now().Add(failoverLinger)
		case <-time.After(time.Until(stopAt)):
		}
	}
	time.Sleep(time.Until(earliest(end, stopAt)))
	wrote := false
	if time.Now().Before(deadline) {
		if _, err := f.counterDo(ctx, "SET", counter, n+1, "PX", dataTTL.Milliseconds()); err != nil {
			return fmt.Errorf("%s: counter of %s: %w", who, lease.Key(), err)
		}
		wrote = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sections = append(f.sections, heldKey{who: who, key: lease.Key(), from: from, to: earliest(time.Now(), deadline)})
	if wrote {
		f.completed[lease.Key()]++
	}
	return nil
}

// long reports whether a section of key that begins at from holds its
// lock through the failover, as a long job does: one that begins while
// the replicas lag (its lock reaches no replica), or one of the first key
// that begins in the failoverLong before (its lock replicated).
func (f *failoverRun) long(key string, from time.Time) bool {
	lagAt := f.killAt.Add(-failoverLag)
	switch {
	case !from.Before(f.killAt):
		return false
	case !from.Before(lagAt):
		return true
	}
	return key == failoverKeys[0] && !from.Before(lagAt.Add(-failoverLong))
}

// counterBound bounds a command to the healthy counter node.
const counterBound = 5 * time.Second

// over marks the failover done: the long sections end.
func (f *failoverRun) over() { f.overOnce.Do(func() { close(f.failedOver) }) }

// probeKey is the key the probe locks, which no worker uses.
const probeKey = "resume"

// probe locks and unlocks a key no worker uses until it succeeds once, and
// sends when it did; it starts when the primary dies. Each failed Lock's
// error is kept for the failure message (lastProbeErr).
func (f *failoverRun) probe(ctx context.Context, l strategy.Locker, resumed chan<- time.Time) {
	named := as(ctx, "probe")
	for ctx.Err() == nil {
		lctx, cancel := context.WithTimeout(named, time.Second)
		lease, err := l.Lock(lctx, probeKey)
		cancel()
		if err == nil {
			resumed <- time.Now()
			_ = unlock(context.WithoutCancel(named), lease)
			return
		}
		f.probeErr.Store(&err)
		sleepCtx(ctx, failoverPause)
	}
}

// lastProbeErr returns the error of the probe's latest failed Lock, or nil
// when none failed yet.
func (f *failoverRun) lastProbeErr() error {
	if err := f.probeErr.Load(); err != nil {
		return *err
	}
	return nil
}

// probeKeys describes what the node holds of the probe's key (its lock,
// fencing counter and line), for the message of a scenario whose locking
// did not resume.
func probeKeys(n *redistest.Node) string {
	keys, err := redis.Strings(n.Do("KEYS", "*"+probeKey+"*"))
	if err != nil {
		return fmt.Sprintf("KEYS: %v", err)
	}
	var parts []string
	for _, k := range keys {
		ttl, _ := redis.Int64(n.Do("PTTL", k))
		var v any
		if typ, _ := redis.String(n.Do("TYPE", k)); typ == "zset" {
			v, _ = redis.Strings(n.Do("ZRANGE", k, 0, -1, "WITHSCORES"))
		} else {
			v, _ = redis.String(n.Do("GET", k))
		}
		parts = append(parts, fmt.Sprintf("%s=%v (pttl %d ms)", k, v, ttl))
	}
	if len(parts) == 0 {
		return "no key of the probe's"
	}
	return strings.Join(parts, ", ")
}

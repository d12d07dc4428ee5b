package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestFailoverUnderContention kills a master while lua_release contends
// for keys on every master through one Pool, and the cluster promotes its
// replica. Without replica acknowledgement a failover can lose a lock, so
// the test reports the overlaps and the leases that ended ErrNotHeld
// rather than failing on them; it asserts that locking resumes on the
// promoted replica within node-timeout + 1 s of its promotion and within
// 3×(node-timeout + 2 s) of the kill, and reports both times.
func TestFailoverUnderContention(t *testing.T) {
	c := redistest.StartCluster(t, redistest.WithClusterReplicas())
	p := newPool(t, c)
	keys := spreadN(t, c, "fo:", contendedKeys, lockName)
	victim := c.Masters()[0]
	// The probe locks a new key each time, all under one hash tag that
	// the victim serves: a probe's lock stranded by the kill (its Unlock
	// failed, and the replica had it) does not hold the next probe back.
	tag := ""
	for i := 0; tag == ""; i++ {
		if k := fmt.Sprintf("{probe%d}", i); c.NodeFor(k) == victim {
			tag = k
		}
	}

	tl := newTally(keys)
	ls := newLockers(t, p, tl)
	stop, ran := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ran)
		tl.contend(ls, keys, 20, stop)
	}()

	probe, err := luarelease.New(p, strategy.Config{TTL: 10 * time.Second})
	require.NoError(t, err)
	defer probe.Close()
	var (
		mu      sync.Mutex
		results []probeResult
	)
	probing, probed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(probed)
		for n := 0; ; n++ {
			probeKey := fmt.Sprintf("%s:%d", tag, n)
			select {
			case <-probing:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			lease, err := probe.Lock(ctx, probeKey)
			cancel()
			if err == nil {
				_ = lease.Unlock(context.Background())
			}
			mu.Lock()
			results = append(results, probeResult{at: time.Now(), ok: err == nil})
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()

	waitDone(t, tl, 200)
	// When the replica takes over, as it says itself (ROLE), polled.
	replica := c.ReplicaOf(victim)
	tookOver := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if role, err := redis.Values(replica.Do("ROLE")); err == nil && len(role) > 0 {
				if r, _ := redis.String(role[0], nil); r == "master" {
					tookOver <- time.Now()
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(tookOver)
	}()
	// When the Pool's map names another master for the victim's slots.
	remapped := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if addr, err := p.MasterOf(tag); err == nil && addr != victim.Addr() {
				remapped <- time.Now()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(remapped)
	}()
	killed := time.Now()
	promoted := c.KillMaster(victim)
	// The promotion as the cluster sees it: every live node names the
	// replica the master of the shard's slots.
	promotedAfter := time.Since(killed)
	tookOverAt, tookOverSeen := <-tookOver
	if tookOverSeen {
		t.Logf("the replica %s called itself master %v after the kill", replica.Addr(), tookOverAt.Sub(killed))
	}
	if at, ok := <-remapped; ok && tookOverSeen {
		t.Logf("the Pool's map named the new master %v after the replica called itself master", at.Sub(tookOverAt))
	}
	t.Logf("killed %s at %v; %s promoted after %v", victim.Addr(), killed.Format(time.StampMilli), promoted.Addr(), promotedAfter)
	waitDone(t, tl, tl.done.Load()+200)
	// Until a probe succeeds after the kill (bounded: a hang bound).
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		_, resumed := outageOf(results, killed)
		mu.Unlock()
		if resumed || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	<-ran
	close(probing)
	<-probed

	mu.Lock()
	outage, resumed := outageOf(results, killed)
	mu.Unlock()
	require.True(t, resumed, "a Lock on the killed master's slots succeeded after the failover")
	t.Logf("locking on the killed master's slots resumed %v after the kill", outage)
	if tookOverSeen {
		t.Logf("the first Lock on them succeeded %v after the replica called itself master", killed.Add(outage).Sub(tookOverAt))
	}
	// The bound, counted from the promotion (every node names the
	// new master; the replica's own ROLE comes first, and under load the
	// other nodes learn it over the bus up to seconds later): the election
	// before it is the cluster's own (node-timeout, the bus, 0.5-1 s of
	// election delay).
	after, within := outage-promotedAfter, c.NodeTimeout()+time.Second
	t.Logf("the first Lock on them succeeded %v after the promotion", after)
	assert.Less(t, after, within, "time from the promotion to the first Lock on the killed master's slots: got %v, want under %v", after, within)
	// The cluster takes node-timeout to mark the master failed, and about
	// as long again to elect the replica; the Pool polls the map meanwhile
	// (pollEvery), so Lock resumes soon after. Slack for a 3x slower machine.
	bound := 3 * (c.NodeTimeout() + 2*time.Second)
	assert.Less(t, outage, bound, "time from the kill to the first Lock on the killed master's slots: got %v, want under %v", outage, bound)
	t.Logf("failover: %d critical sections, %d overlaps, %d leases ended ErrNotHeld, %d Lock failures, %d Unlock failures, %d Unlocks retried",
		tl.done.Load(), tl.overlaps.Load(), tl.notHeld.Load(), len(tl.lockFails), len(tl.unlockErr), tl.unlockRetries.Load())
	assert.Empty(t, tl.lockFails, "Lock calls that gave up (30 s each) through the failover")

	l, err := luarelease.New(p, strategy.Config{TTL: 10 * time.Second})
	require.NoError(t, err)
	defer l.Close()
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lease, err := l.Lock(ctx, k)
		cancel()
		require.NoError(t, err, "Lock of %q after the failover", k)
		require.NoError(t, lease.Unlock(context.Background()), "Unlock of %q after the failover", k)
	}
}

// probeResult is one probe Lock: when it returned, and whether it held.
type probeResult struct {
	at time.Time
	ok bool
}

// outageOf returns how long after killed the first probe Lock succeeded
// that followed a failed one (the outage), and whether one did.
func outageOf(results []probeResult, killed time.Time) (time.Duration, bool) {
	failed := false
	for _, r := range results {
		if r.at.Before(killed) {
			continue
		}
		if !r.ok {
			failed = true
			continue
		}
		if failed {
			return r.at.Sub(killed), true
		}
	}
	return 0, !failed && len(results) > 0 && results[len(results)-1].ok
}

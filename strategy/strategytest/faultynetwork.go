package strategytest

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/chaos"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// The faulty-network scenario's run: internal/chaos's, shortened so that
// the suite stays fast. The seed is fixed, so that every run and every
// technique gets the same fault schedule; `make chaos` runs long, seeded
// runs of the production techniques.
const (
	faultySeed     = 28
	faultyDuration = 1500 * time.Millisecond
	// faultyTTL lets a lock orphaned by a lost reply expire within the
	// scenario, yet is far above any fault's length (400 ms each way).
	faultyTTL = 2 * time.Second
	// faultyLockableWait bounds the Lock of each key after healing: long
	// enough to see an orphaned lock expire and be taken.
	faultyLockableWait = faultyTTL + time.Second
)

// faultyNetworkScenario: Lockers contend for keys while the network to the
// lock node (or to a minority of a multi-node technique's nodes) adds
// latency, cuts connections and swallows replies. Two holders at once, a
// lost update, a lease whose Deadline lies outside [Lock call start,
// return + TTL] and, on a technique that claims Fencing, a fence not above
// the key's previous one are violations. A technique claims exclusion here
// when it claims MutualExclusion and its release is owner-safe: a release whose reply was lost is
// retried, as the lease rules allow, and a release that is not owner-safe
// may then delete the next holder's lock. The scenario is black-box for
// every technique: the faults are the network's, at no fault point, so a
// technique that does not claim the property is not judged on whether the
// run caught a violation; what it showed is in the account (a lock
// orphaned by a lost reply keeps its key until its TTL ends).
func faultyNetworkScenario() scenario {
	return scenario{name: "faulty-network", property: "MutualExclusion", blackBox: true, proxied: true,
		claimed: func(p strategy.Properties) bool { return p.MutualExclusion && p.OwnerSafeRelease }, run: faultyNetwork}
}

func faultyNetwork(ctx context.Context, e *env, r *Result) {
	fencing := e.fencing()
	rep, err := e.chaos(ctx, fencing)
	if err != nil {
		fail(r, "chaos run", err)
		return
	}
	r.Attempts = rep.Sections
	r.Violations = rep.Overlaps + rep.Lost + rep.BadDeadlines
	fences := "no fences (not claimed)"
	if fencing {
		r.Violations += rep.FenceRegressions
		fences = fmt.Sprintf("%d fences not above the key's last", rep.FenceRegressions)
	}
	r.Account = fmt.Sprintf("%s: %d sections, %d overlaps, %d updates lost, %d bad Deadlines, %s; %d Locks failed, %d leases expired on return; %s",
		faultsText(rep, len(e.addrs)), rep.Sections, rep.Overlaps, rep.Lost, rep.BadDeadlines, fences, rep.FailedLocks, rep.Expired, afterHealing(rep))
	if rep.Sections == 0 {
		r.Account += "; no Lock succeeded during the faults, so nothing was checked"
	}
	if r.Violations > 0 && len(rep.Examples) > 0 {
		r.Account += "; first: " + rep.Examples[0]
	}
}

// fencing reports whether the target claims Fencing.
func (e *env) fencing() bool {
	l, err := e.locker(strategy.Config{})
	return err == nil && l.Properties().Fencing
}

// faultsText names the run's faults for an account line.
func faultsText(rep chaos.Report, nodes int) string {
	faulty := faultyNodes(nodes)
	return fmt.Sprintf("seed %d, %v of latency, cuts and swallowed replies (%d swallowed) on %d of %d node(s)",
		rep.Seed, rep.Duration, rep.Swallowed, faulty, nodes)
}

// afterHealing says how long the keys stayed locked once the faults healed
// and the workers had let go (a lock orphaned by a lost reply keeps its
// key until its TTL ends).
func afterHealing(rep chaos.Report) string {
	took := rep.MaxLockable.Round(time.Millisecond)
	if rep.Unlockable > 0 {
		return fmt.Sprintf("after healing %d key(s) could not be locked within %v (TTL %v)", rep.Unlockable, took, faultyTTL)
	}
	return fmt.Sprintf("after healing every key was locked within %v (TTL %v)", took, faultyTTL)
}

// faultyNodes is how many of n nodes the network faults: the one node, or
// the largest minority.
func faultyNodes(n int) int {
	if n == 1 {
		return 1
	}
	return (n - 1) / 2
}

// chaos runs internal/chaos's run on the env's nodes: a proxy in front of
// each faulty node, the counters on node 1 reached directly, the Lockers'
// calls and commands recorded in the Timeline; fences are checked when
// fencing (the target claims Fencing).
func (e *env) chaos(ctx context.Context, fencing bool) (chaos.Report, error) {
	cfg := chaos.Config{
		Seed: faultySeed, Duration: faultyDuration, TTL: faultyTTL, LockableWait: faultyLockableWait,
		Prefix:   e.prefix,
		NoFences: !fencing,
		Counter:  e.pools[0],
		Wrap: func(pool strategy.Pool, i int) strategy.Pool {
			return e.tracedKeepAddr(pool, nodeName(i, len(e.addrs)))
		},
		Client: as,
		New: func(pools []strategy.Pool, cfg strategy.Config) (strategy.Locker, error) {
			l, err := e.target.New(pools, cfg)
			if err != nil {
				return nil, lockerr.New("strategytest", fmt.Errorf("build %s: %w", e.target.Name, err))
			}
			return closing{tracedLocker: traced(l, e.rec, cfg), inner: l}, nil
		},
	}
	faulty := faultyNodes(len(e.addrs))
	for i, addr := range e.addrs {
		if i < faulty {
			p := redistest.NewProxy(e.tb, addr)
			cfg.Proxies = append(cfg.Proxies, p)
			addr = p.Addr()
		}
		cfg.Nodes = append(cfg.Nodes, addr)
	}
	e.rec.note("", "%d Lockers x %d workers contend for keys %v (TTL %v) while the network to %d of %d node(s) fails for %v: latency, cuts, swallowed replies (seed %d)",
		chaos.DefaultLockers, chaos.DefaultWorkers, chaos.DefaultKeys(), faultyTTL, faulty, len(e.addrs), faultyDuration, int64(faultySeed))
	return chaos.Run(ctx, cfg)
}

// closing is a traced Locker that chaos.Run can close: it closes the
// technique's Locker underneath.
type closing struct {
	tracedLocker
	inner strategy.Locker
}

// Close closes the underlying Locker, when it has a Close method.
func (c closing) Close() error {
	if cl, ok := c.inner.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

// tracedKeepAddr is traced, keeping the pool's Addr method when it has one:
// a Locker on a client that dials by address (a peer's) must dial the
// proxy the pool dials, not find the server behind it.
func (e *env) tracedKeepAddr(pool strategy.Pool, node string) strategy.Pool {
	t := e.traced(pool, node)
	if a, ok := pool.(interface{ Addr() string }); ok {
		return addrPool{Pool: t, addr: a.Addr()}
	}
	return t
}

// addrPool is a pool that tells the address it dials.
type addrPool struct {
	strategy.Pool
	addr string
}

// Addr returns the address the pool dials.
func (p addrPool) Addr() string { return p.addr }

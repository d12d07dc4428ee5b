package strategytest

import (
	"context"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// scenario is one check of one property.
type scenario struct {
	name     string
	property string
	claimed  func(strategy.Properties) bool
	// managed scenarios kill, freeze or replicate nodes.
	managed bool
	// proxied scenarios put a proxy in front of the nodes' addresses.
	proxied bool
	// blackBox scenarios use no fault point on any technique (they fault
	// the network instead), so their runs are black-box everywhere.
	blackBox bool
	// sentinel scenarios run on a primary with replicas under Sentinels
	// (env.sentinel), on targets that ask for it (Target.SentinelFailover).
	sentinel bool
	run      func(ctx context.Context, e *env, r *Result)
}

// scenarios lists the suite in the order it runs and reports.
func scenarios() []scenario {
	return []scenario{
		// mutual-exclusion stops no client at a fault point: plain
		// contention cannot force a takeover race, so an unclaimed
		// MutualExclusion is reported here, not judged; expired-takeover
		// is where it must show.
		{name: "mutual-exclusion", property: "MutualExclusion", blackBox: true, claimed: mutualExclusionClaimed, run: mutualExclusion},
		{name: "expired-takeover", property: "MutualExclusion", claimed: mutualExclusionClaimed, run: expiredTakeover},
		{name: "crash-liveness", property: "Liveness", claimed: expires, run: crashLiveness},
		{name: "atomic-acquire", property: "AtomicAcquire",
			claimed: func(p strategy.Properties) bool { return p.AtomicAcquire }, run: atomicAcquire},
		{name: "owner-safe-release", property: "OwnerSafeRelease",
			claimed: func(p strategy.Properties) bool { return p.OwnerSafeRelease }, run: ownerSafeRelease},
		{name: "clock-skew", property: "ClockSafe",
			claimed: func(p strategy.Properties) bool { return p.ClockSafe }, run: clockSkew},
		{name: "node-fault", property: "NodeFaultTolerant", managed: true,
			claimed: func(p strategy.Properties) bool { return p.NodeFaultTolerant }, run: nodeFault},
		{name: "fencing", property: "Fencing",
			claimed: func(p strategy.Properties) bool { return p.Fencing }, run: fencingScenario},
		faultyNetworkScenario(),
		sentinelFailoverScenario(),
	}
}

func mutualExclusionClaimed(p strategy.Properties) bool { return p.MutualExclusion }

// ScenarioNames returns the names of the suite's scenarios in order.
func ScenarioNames() []string {
	var names []string
	for _, s := range scenarios() {
		names = append(names, s.name)
	}
	return names
}

// execute runs s on e and returns its result.
func (s scenario) execute(ctx context.Context, e *env) Result {
	l, err := e.locker(strategy.Config{})
	r := Result{Technique: e.name, Scenario: s.name, Property: s.property}
	if err != nil {
		r.Verdict, r.Account = Failed, err.Error()
		return r
	}
	props := l.Properties()
	r.Claimed = s.claimed(props)
	_, r.WhiteBox = windowsOf(props.Name)
	r.WhiteBox = r.WhiteBox && !s.blackBox
	if s.managed && !e.managed {
		r.Verdict, r.Account = NotApplicable, "skipped: needs managed nodes"
		return r
	}
	if s.proxied && len(e.addrs) == 0 {
		r.Verdict, r.Account = NotApplicable, "skipped: needs the nodes' addresses (Options.Pool names none)"
		return r
	}
	if s.sentinel && e.sentinel == nil {
		r.Verdict, r.Account = NotApplicable, "skipped: runs on one-node targets that follow a sentinel.Pool (Target.SentinelFailover)"
		return r
	}
	start := time.Now()
	e.rec.start(!expires(props))
	s.run(ctx, e, &r)
	r.Elapsed = time.Since(start)
	r.Timeline = e.rec.timeline()
	r.settle()
	return r
}

// fail marks r as a scenario that could not complete.
func fail(r *Result, format string, err error) {
	r.Verdict = Failed
	r.Account = format + ": " + err.Error()
}

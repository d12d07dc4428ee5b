package chaos_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lockzoo/lockzoo/internal/chaos"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// The environment a chaos run reads: CHAOS_SEED replays a run, CHAOS_SECONDS
// sets how long the faults last per technique, CHAOS_FAULTS picks the fault
// kinds ("latency,cut,swallow"; all by default).
const (
	seedEnv    = "CHAOS_SEED"
	secondsEnv = "CHAOS_SECONDS"
	faultsEnv  = "CHAOS_FAULTS"
	// defaultSeconds keeps the run in `make test` short.
	defaultSeconds = 10
)

// TestChaos runs issue 28's chaos on the production techniques: 4 Lockers ×
// 2 goroutines contend for 3 keys with a 10 s TTL while the lock node
// (lua_release), or a minority of 2 of redlock's 5 nodes, each with its own
// schedule, suffers latency, cuts and swallowed replies. Every lease must be
// right (no overlap, no lost update, fences strictly increasing per key,
// Deadline within [call start, return + TTL]), every key must be lockable
// within 1 s once the faults heal, and no goroutine may be left. The seed is
// logged first; CHAOS_SEED=<seed> replays the same schedule.
func TestChaos(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv(seedEnv); s != "" {
		var err error
		seed, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "%s=%q", seedEnv, s)
	}
	seconds := defaultSeconds
	if s := os.Getenv(secondsEnv); s != "" {
		var err error
		seconds, err = strconv.Atoi(s)
		require.NoError(t, err, "%s=%q", secondsEnv, s)
		require.Positive(t, seconds, "%s", secondsEnv)
	}
	faults, err := chaos.ParseFaults(os.Getenv(faultsEnv))
	require.NoError(t, err, "%s", faultsEnv)
	t.Logf("chaos seed %d, %d s per technique, faults %v; replay with %s=%d", seed, seconds, faults, seedEnv, seed)

	for _, target := range productionTargets(t) {
		// One after the other: the leak check sees every goroutine of the
		// process, so a parallel run's proxies would show up as leaks.
		t.Run(target.Name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay: %s=%d %s=%d go test -race -run 'TestChaos/%s' ./internal/chaos/", seedEnv, seed, secondsEnv, seconds, target.Name)
				}
			})
			cfg := chaosConfig(t, target, seed, time.Duration(seconds)*time.Second, faults)
			running := goleak.IgnoreCurrent() // the harness's nodes and proxies
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second+2*time.Minute)
			defer cancel()
			report, err := chaos.Run(ctx, cfg)
			require.NoError(t, err, "seed %d: %v", seed, report)
			t.Log(report.String())
			for _, e := range report.Examples {
				t.Log("  " + e)
			}
			assert.Positive(t, report.Sections, "seed %d: sections completed", seed)
			assert.Zero(t, report.Overlaps, "seed %d: overlapping holders", seed)
			assert.Zero(t, report.Lost, "seed %d: lost updates on the healthy node", seed)
			assert.Zero(t, report.FenceRegressions, "seed %d: fences not strictly increasing per key", seed)
			assert.Zero(t, report.BadDeadlines, "seed %d: Deadlines outside [Lock call start, return + TTL]", seed)
			assert.Zero(t, report.Unlockable, "seed %d: keys never lockable after healing", seed)
			assert.LessOrEqual(t, report.MaxLockable, chaos.LockableBound,
				"seed %d: max time to lock a free key after healing, per key %v", seed, report.Lockable)
			assert.NoError(t, goleak.Find(running), "seed %d: goroutines left after the run", seed)
		})
	}
}

// productionTargets returns lua_release and redlock from the one list of
// techniques.
func productionTargets(t *testing.T) []strategytest.Target {
	t.Helper()
	var out []strategytest.Target
	for _, target := range techniques.All() {
		if target.Name == "lua_release" || target.Name == "redlock" {
			out = append(out, target)
		}
	}
	require.Len(t, out, 2, "lua_release and redlock in techniques.All()")
	return out
}

// chaosConfig starts target's nodes and a healthy counter node, and puts a
// proxy in front of the lock node, or of a minority of a multi-node
// technique's nodes.
func chaosConfig(t *testing.T, target strategytest.Target, seed int64, d time.Duration, faults []chaos.Fault) chaos.Config {
	t.Helper()
	n := max(target.Nodes, 1)
	nodes := redistest.Start(t, n+1)
	faulty := 1
	if n > 1 {
		faulty = (n - 1) / 2 // the largest minority
	}
	cfg := chaos.Config{
		Seed: seed, Duration: d, Faults: faults,
		New:     target.New,
		Counter: nodes[n].Pool(),
	}
	for i, node := range nodes[:n] {
		if i < faulty {
			p := redistest.NewProxy(t, node.Addr())
			cfg.Proxies = append(cfg.Proxies, p)
			cfg.Nodes = append(cfg.Nodes, p.Addr())
			continue
		}
		cfg.Nodes = append(cfg.Nodes, node.Addr())
	}
	return cfg
}

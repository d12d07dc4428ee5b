package strategytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

func TestMain(m *testing.M) { locktest.VerifyTestMain(m) }

func luaTarget() strategytest.Target {
	return strategytest.Target{Name: "lua_release", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
		return luarelease.New(p[0], c)
	}}
}

// TestEvaluateManaged runs two scenarios on managed nodes and checks the
// verdicts as data: the claimed property holds and the unclaimed one is
// reproduced.
func TestEvaluateManaged(t *testing.T) {
	var progress []string
	results, err := strategytest.Evaluate(context.Background(), luaTarget(), strategytest.Options{
		Scenarios: []string{"owner-safe-release", "node-fault"},
		Progress:  func(r strategytest.Result) { progress = append(progress, r.Scenario) },
	})
	if err != nil {
		t.Fatalf("Evaluate() = %v, want nil", err)
	}
	want := map[string]strategytest.Verdict{"owner-safe-release": strategytest.Holds, "node-fault": strategytest.Violated}
	if len(results) != len(want) || len(progress) != len(want) {
		t.Fatalf("Evaluate() gave %d results, %d progress calls; want %d", len(results), len(progress), len(want))
	}
	for _, r := range results {
		if r.Verdict != want[r.Scenario] {
			t.Errorf("%s verdict = %s, want %s (%s)", r.Scenario, r.Verdict, want[r.Scenario], r.Account)
		}
		if expected, judged := r.Expected(); !judged || !expected {
			t.Errorf("%s Expected() = %v, %v; want true, true", r.Scenario, expected, judged)
		}
	}
}

// TestEvaluateAddrs runs on an existing server: scenarios that need managed
// nodes are not applicable, the others still run, a technique that lacks a
// property shows the violation, and nothing the scenarios wrote (a
// counter, a fencing resource, fencing counters, locks) is left on the
// server.
func TestEvaluateAddrs(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	target := strategytest.Target{New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
		return setnxex.New(p[0], c)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := strategytest.Evaluate(ctx, target, strategytest.Options{
		Addrs:     []string{node.Addr()},
		Scenarios: []string{"mutual-exclusion", "node-fault", "owner-safe-release", "fencing"},
	})
	require.NoError(t, err, "Evaluate()")
	require.Len(t, results, 4, "results, one per scenario asked for")
	got := map[string]strategytest.Result{}
	for _, r := range results {
		got[r.Scenario] = r
	}
	if r := got["node-fault"]; r.Verdict != strategytest.NotApplicable {
		t.Errorf("node-fault on -addrs = %s (%s), want %s", r.Verdict, r.Account, strategytest.NotApplicable)
	}
	if r := got["owner-safe-release"]; r.Verdict != strategytest.Violated || r.Technique != "set_nx_ex" {
		t.Errorf("owner-safe-release = %s on %q (%s), want %s on set_nx_ex", r.Verdict, r.Technique, r.Account, strategytest.Violated)
	}
	for _, name := range []string{"mutual-exclusion", "fencing"} {
		assert.NotEqual(t, strategytest.Failed, got[name].Verdict, "%s on -addrs: %s", name, got[name].Account)
	}
	keys, err := redis.Strings(node.Do("KEYS", "*"))
	require.NoError(t, err, "KEYS *")
	assert.Empty(t, keys, "keys left on the server after Evaluate, want none")
}

func TestEvaluateRejectsNilNew(t *testing.T) {
	if _, err := strategytest.Evaluate(context.Background(), strategytest.Target{}, strategytest.Options{}); err == nil {
		t.Errorf("Evaluate(Target{}) = nil, want an error")
	}
}

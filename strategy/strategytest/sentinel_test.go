package strategytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestEvaluateSentinel runs behind Sentinel: the scenarios reach the
// master the Sentinels name, those that need managed nodes are not
// applicable, and nothing is left on the master; an unknown master name
// fails the scenario saying so.
func TestEvaluateSentinel(t *testing.T) {
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1, Sentinels: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := strategytest.Evaluate(ctx, luaTarget(), strategytest.Options{
		Sentinels: s.Addrs(),
		Masters:   []string{s.Name()},
		Scenarios: []string{"mutual-exclusion", "node-fault", "fencing"},
	})
	require.NoError(t, err, "Evaluate()")
	require.Len(t, results, 3, "results, one per scenario asked for")
	for _, r := range results {
		want := strategytest.Holds
		if r.Scenario == "node-fault" {
			want = strategytest.NotApplicable
		}
		assert.Equal(t, want, r.Verdict, "%s behind Sentinel (%s)", r.Scenario, r.Account)
	}
	keys, err := redis.Strings(s.Master().Do("KEYS", "*"))
	require.NoError(t, err, "KEYS *")
	assert.Empty(t, keys, "keys left on the master after Evaluate, want none")

	results, err = strategytest.Evaluate(ctx, luaTarget(), strategytest.Options{
		Sentinels: s.Addrs(),
		Masters:   []string{"nosuchmaster"},
		Scenarios: []string{"mutual-exclusion"},
	})
	require.NoError(t, err, "Evaluate() with an unknown master")
	require.Len(t, results, 1)
	assert.Equal(t, strategytest.Failed, results[0].Verdict, "mutual-exclusion with an unknown master")
	assert.Contains(t, results[0].Account, "unknown master name", "the account of the failed scenario")
}

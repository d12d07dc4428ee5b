package compare

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestSentinel runs through Sentinel: the suite and the benchmarks reach
// the master the Sentinels name, the scenarios that kill or freeze nodes
// are skipped as on -addrs, and the master's keyspace is left as found.
func TestSentinel(t *testing.T) {
	locktest.NoLeaks(t)
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1})
	master := s.Master()
	before := allKeys(t, master)
	code, stdout, stderr := runCommand(t, "-sentinel", strings.Join(s.Addrs(), ","), "-master", s.Name(),
		"-techniques", "lua_release", "-bench", "100ms", "-workers", "2", "-contenders", "3", "-json", "-")
	require.Equal(t, exitOK, code, "run() exit status; stderr:\n%s", stderr)
	var rep Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), "stdout with -json - is not JSON:\n%s", stdout)
	assert.Equal(t, backendSentinel, rep.Backend, "Backend")
	assert.Equal(t, s.Addrs(), rep.Settings.Sentinels, "Settings.Sentinels")
	assert.Equal(t, []string{s.Name()}, rep.Settings.Masters, "Settings.Masters")
	require.Len(t, rep.Techniques, 1, "techniques in the report")
	tech := rep.Techniques[0]
	assert.Empty(t, tech.Errors, "lua_release's measurement errors")
	assert.NotNil(t, tech.Speed, "lua_release's uncontended speed through Sentinel")
	require.Len(t, tech.Results, len(strategytest.ScenarioNames()), "lua_release's results: one per scenario")
	for _, r := range tech.Results {
		na := r.Verdict == strategytest.NotApplicable
		wantNA := r.Scenario == "node-fault" || r.Scenario == "sentinel-failover"
		assert.Equal(t, wantNA, na, "%s through Sentinel: %s (%s); want not applicable only for node-fault and sentinel-failover", r.Scenario, r.Verdict, r.Account)
	}
	assert.Equal(t, before, allKeys(t, master), "the master's keys after the run, want those before it")
}

// TestSentinelNeedsEnoughMasters: redlock over one master name fails its
// scenarios and measurements saying how many masters it needs, rather than running on
// fewer nodes than it spans.
func TestSentinelNeedsEnoughMasters(t *testing.T) {
	locktest.NoLeaks(t)
	s := redistest.StartSentinel(t, redistest.SentinelConfig{Replicas: 1, Sentinels: 1})
	code, _, stderr := runCommand(t, "-sentinel", s.Addrs()[0], "-master", s.Name(),
		"-techniques", "redlock", "-scenarios", "mutual-exclusion", "-bench", "100ms", "-workers", "2", "-contenders", "none")
	assert.Equal(t, exitProblems, code, "run() exit status; stderr:\n%s", stderr)
	assert.Regexp(t, `needs \d masters, -master gave 1`, stderr, "stderr")
}

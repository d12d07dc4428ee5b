package peers_test

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestFindingsAreNarrow: every finding names a peer and a scenario of the
// suite, and its Account compiles; the faulty-network one matches the
// account rueidislock earned and nothing close to it that would hide
// another fault (no reply swallowed, a bad Deadline, a holding verdict,
// another technique).
func TestFindingsAreNarrow(t *testing.T) {
	var names []string
	for _, target := range peers.Targets() {
		names = append(names, target.Name)
	}
	for _, f := range peers.Findings() {
		assert.Contains(t, names, f.Target, "finding's target")
		assert.True(t, slices.Contains(strategytest.ScenarioNames(), f.Scenario), "finding's scenario %q is not the suite's", f.Scenario)
		_, err := regexp.Compile(f.Account)
		assert.NoError(t, err, "finding's Account %q", f.Account)
		assert.NotEmpty(t, f.Why, "finding's Why")
	}

	const seen = "seed 28, 1.5s of latency, cuts and swallowed replies (17 swallowed) on 1 of 1 node(s): 123 sections, 2 overlaps, 1 updates lost, 0 bad Deadlines, no fences (not claimed); 0 Locks failed, 0 leases expired on return; after healing every key was locked within 990ms (TTL 2s); first: locker 2/worker 1 entered c's section with 1 other holder(s) inside"
	violated := func(technique, account string) strategytest.Result {
		return strategytest.Result{Technique: technique, Scenario: "faulty-network", Property: "MutualExclusion", Claimed: true,
			WhiteBox: false, Verdict: strategytest.Violated, Violations: 3, Attempts: 123, Account: account}
	}
	tests := []struct {
		name  string
		r     strategytest.Result
		known bool
	}{
		{"rueidislock's account", violated(peers.RueidislockName, seen), true},
		{"no reply swallowed", violated(peers.RueidislockName, regexp.MustCompile(`\(17 swallowed\)`).ReplaceAllString(seen, "(0 swallowed)")), false},
		{"a bad Deadline", violated(peers.RueidislockName, regexp.MustCompile(`0 bad Deadlines`).ReplaceAllString(seen, "1 bad Deadlines")), false},
		{"another peer", violated(peers.RedsyncName, seen), false},
		{"a lockzoo technique", violated("lua_release", seen), false},
		{"holds", func() strategytest.Result {
			r := violated(peers.RueidislockName, seen)
			r.Verdict = strategytest.Holds
			return r
		}(), false},
		{"another scenario", func() strategytest.Result {
			r := violated(peers.RueidislockName, seen)
			r.Scenario = "mutual-exclusion"
			return r
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, known := peers.KnownFinding(tt.r)
			assert.Equal(t, tt.known, known, "KnownFinding(%s/%s: %s)", tt.r.Technique, tt.r.Scenario, tt.r.Account)
			assert.Equal(t, tt.known, why != "", "why %q", why)
		})
	}
}

// TestRueidisShiftsRepliesAfterALostOne reproduces the cause of the
// faulty-network finding on rueidislock's own client (one connection,
// client-side caching, so its pipeline always runs in the background):
// after one reply is lost on a connection that stays open, the next
// command's reply goes to the command before it, and a later command's
// reply to that one. Here an INCR gets a GET's string as its reply. The
// proxy loses one whole reply and keeps the stream well formed
// (DropNextReplies), the fault a middlebox or a bug can cause.
func TestRueidisShiftsRepliesAfterALostOne(t *testing.T) {
	noLeaks(t)
	node := redistest.Start(t, 1)[0]
	proxy := redistest.NewProxy(t, node.Addr())
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{ClientOption: rueidis.ClientOption{InitAddress: []string{proxy.Addr()}}, KeyMajority: 1})
	require.NoError(t, err)
	t.Cleanup(l.Close)
	c := l.Client()
	direct := func(cmd string, args ...any) (any, error) {
		conn := node.Pool().Get()
		defer conn.Close()
		return conn.Do(cmd, args...)
	}
	const other = "someone else's value"
	_, err = direct("SET", "shift:other", other)
	require.NoError(t, err)

	proxy.DropNextReplies(1)
	lostCtx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = c.Do(lostCtx, c.B().Get().Key("shift:lost").Build()).Error()
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "GET whose reply the proxy swallows")
	require.Eventually(t, func() bool { return proxy.Swallowed() == 1 }, 10*time.Second, 10*time.Millisecond, "the proxy swallowed one reply")

	incr := make(chan rueidis.RedisResult, 1)
	go func() { // ends when its reply comes, or its context's 10 s end
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		incr <- c.Do(ctx, c.B().Incr().Key("shift:n").Build())
	}()
	// The INCR ran once Redis holds 1; its reply went to the lost GET.
	require.Eventually(t, func() bool {
		n, err := redis.Int(direct("GET", "shift:n"))
		return err == nil && n == 1
	}, 10*time.Second, 10*time.Millisecond, "the INCR reached Redis")
	getCtx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = c.Do(getCtx, c.B().Get().Key("shift:other").Build()) // its reply goes to the INCR

	got := <-incr
	require.NoError(t, got.Error(), "INCR's result")
	s, err := got.ToString()
	require.NoError(t, err, "INCR's result as a string")
	assert.Equal(t, other, s, "INCR's reply: the GET's, not the integer 1 (no shift would give 1)")
	_, err = direct("DEL", "shift:other", "shift:n", "shift:lost")
	require.NoError(t, err)
}

package chaos_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/chaos"
	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestRunFindsViolations runs the checks on a Locker that grants every
// Lock at once, with fences that go down and Deadlines an hour ahead: the
// first two sections meet inside (the counter node holds the first GET
// until the second arrives), so the run must count an overlap, a lost
// update, fence regressions and bad Deadlines. No faults are needed.
func TestRunFindsViolations(t *testing.T) {
	rep := runGrantAll(t, false)
	assert.Positive(t, rep.Sections, "sections")
	assert.Positive(t, rep.Overlaps, "overlaps of two holders granted at once")
	assert.Positive(t, rep.Lost, "updates lost by two holders at once")
	assert.Positive(t, rep.FenceRegressions, "fences going down")
	assert.Equal(t, rep.Sections, rep.BadDeadlines, "Deadlines an hour ahead, one per section")
	assert.Equal(t, rep.Overlaps+rep.Lost+rep.FenceRegressions+rep.BadDeadlines, rep.Violations())
	assert.NotEmpty(t, rep.Examples, "violations described")
	assert.False(t, rep.Stuck(), "a Locker that grants at once is never stuck: %v", rep.Lockable)
}

// TestRunNoFences runs TestRunFindsViolations's Locker with NoFences, as
// for a technique whose leases carry no fences: the overlap and the lost
// update must still be counted and described, and no fence regression,
// since there are no fences to judge.
func TestRunNoFences(t *testing.T) {
	rep := runGrantAll(t, true)
	assert.Positive(t, rep.Overlaps, "overlaps of two holders granted at once")
	assert.Positive(t, rep.Lost, "updates lost by two holders at once")
	assert.Zero(t, rep.FenceRegressions, "fence regressions with NoFences")
	require.NotEmpty(t, rep.Examples, "violations described")
	overlap := false
	for _, e := range rep.Examples {
		assert.NotContains(t, e, "fence", "example with NoFences")
		overlap = overlap || strings.Contains(e, "other holder(s) inside")
	}
	assert.True(t, overlap, "an overlap among the examples %q", rep.Examples)
}

// runGrantAll runs one second of a chaos run, with no fault, of a Locker
// that grants every Lock at once (grantAll), its first two sections made
// to meet inside by the counter node (barrierPool), and returns the report.
func runGrantAll(t *testing.T, noFences bool) chaos.Report {
	t.Helper()
	nodes := redistest.Start(t, 1)
	b := &barrier{both: make(chan struct{})}
	rep, err := chaos.Run(context.Background(), chaos.Config{
		Seed: 1, Duration: time.Second, Lockers: 1, Workers: 2, Keys: []string{"a"},
		Nodes:    []string{nodes[0].Addr()},
		New:      func([]strategy.Pool, strategy.Config) (strategy.Locker, error) { return &grantAll{}, nil },
		Counter:  barrierPool{pool: nodes[0].Pool(), b: b},
		NoFences: noFences,
	})
	require.NoError(t, err)
	t.Log(rep.String())
	return rep
}

// TestRunHealthy runs lua_release with no fault: nothing may be counted
// against it, so the checks raise no false alarm.
func TestRunHealthy(t *testing.T) {
	nodes := redistest.Start(t, 2)
	rep, err := chaos.Run(context.Background(), chaos.Config{
		Seed: 1, Duration: time.Second,
		Nodes:   []string{nodes[0].Addr()},
		New:     func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) { return luarelease.New(p[0], c) },
		Counter: nodes[1].Pool(),
	})
	require.NoError(t, err)
	t.Log(rep.String())
	assert.Positive(t, rep.Sections, "sections")
	assert.Zero(t, rep.Violations(), "violations with no fault: %v", rep.Examples)
	assert.Zero(t, rep.FailedLocks+rep.FailedUnlocks+rep.NotHeld, "failed Locks, failed Unlocks, ErrNotHeld with no fault")
	assert.False(t, rep.Stuck(), "keys stuck with no fault: %v", rep.Lockable)
	assert.Equal(t, len(chaos.DefaultKeys()), len(rep.Lockable), "time to lockable measured per key")
}

// grantAll is a Locker that locks nothing: every Lock succeeds at once.
type grantAll struct{ n atomic.Uint64 }

func (g *grantAll) TryLock(ctx context.Context, key string) (strategy.Lease, error) {
	return g.Lock(ctx, key)
}

func (g *grantAll) Lock(_ context.Context, key string) (strategy.Lease, error) {
	return fakeLease{key: key, fence: 1<<40 - g.n.Add(1), deadline: time.Now().Add(time.Hour)}, nil
}

func (g *grantAll) Properties() strategy.Properties { return strategy.Properties{Name: "grant-all"} }

type fakeLease struct {
	key      string
	fence    uint64
	deadline time.Time
}

func (l fakeLease) Key() string                                 { return l.key }
func (l fakeLease) Token() string                               { return "t" }
func (l fakeLease) Fence() uint64                               { return l.fence }
func (l fakeLease) Deadline() time.Time                         { return l.deadline }
func (l fakeLease) Extend(context.Context, time.Duration) error { return nil }
func (l fakeLease) Unlock(context.Context) error                { return nil }

// barrier holds the first GET until a second one arrives.
type barrier struct {
	n    atomic.Int32
	both chan struct{}
}

func (b *barrier) arrive(ctx context.Context) {
	switch b.n.Add(1) {
	case 1:
		select {
		case <-b.both:
		case <-ctx.Done():
		}
	case 2:
		close(b.both)
	}
}

// barrierPool is a pool whose connections pass GETs through b.
type barrierPool struct {
	pool *redis.Pool
	b    *barrier
}

func (p barrierPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	return barrierConn{Conn: c, b: p.b}, nil
}

type barrierConn struct {
	redis.Conn
	b *barrier
}

func (c barrierConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	if cmd == "GET" {
		c.b.arrive(ctx)
	}
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c barrierConn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// TestRunBadConfig: a Config missing what a run needs is refused before
// anything starts.
func TestRunBadConfig(t *testing.T) {
	newLocker := func([]strategy.Pool, strategy.Config) (strategy.Locker, error) { return &grantAll{}, nil }
	tests := []struct {
		name string
		cfg  chaos.Config
		want string
	}{
		{name: "no New", cfg: chaos.Config{Nodes: []string{"x"}}, want: "Config.New"},
		{name: "no Nodes", cfg: chaos.Config{New: newLocker}, want: "Config.Nodes"},
		{name: "no Counter", cfg: chaos.Config{New: newLocker, Nodes: []string{"x"}}, want: "Config.Counter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chaos.Run(context.Background(), tc.cfg)
			require.ErrorIs(t, err, strategy.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

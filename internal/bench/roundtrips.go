package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// Counting is a strategy.Pool that counts the round trips made on the
// connections it hands out: each Do (which flushes whatever was Sent
// before it and reads every reply) and each explicit Flush is one. Build
// the Locker under test over Counting pools to see its round trips.
type Counting struct {
	pool  strategy.Pool
	trips atomic.Int64
}

var _ strategy.Pool = (*Counting)(nil)

// Count wraps pool.
func Count(pool strategy.Pool) *Counting { return &Counting{pool: pool} }

// Trips returns the round trips counted so far.
func (p *Counting) Trips() int64 { return p.trips.Load() }

// GetContext borrows a connection from the wrapped pool and counts its
// round trips.
func (p *Counting) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, trips: &p.trips}, nil
}

// countingConn counts the round trips of one borrowed connection. It
// implements redis.ConnWithContext, which redis.DoContext needs.
type countingConn struct {
	redis.Conn
	trips *atomic.Int64
}

var _ redis.ConnWithContext = (*countingConn)(nil)

func (c *countingConn) Do(cmd string, args ...any) (any, error) {
	c.trips.Add(1)
	return c.Conn.Do(cmd, args...)
}

func (c *countingConn) Flush() error {
	c.trips.Add(1)
	return c.Conn.Flush()
}

func (c *countingConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.trips.Add(1)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c *countingConn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// errNoCtx is what the wrapped connection says when it cannot bound a call
// by a context; redigo's own connections always can.
var errNoCtx = errors.New("connection does not support a timeout")

func (c *countingConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	cwt, ok := c.Conn.(redis.ConnWithTimeout)
	if !ok {
		return nil, errNoCtx
	}
	c.trips.Add(1)
	return cwt.DoWithTimeout(timeout, cmd, args...)
}

func (c *countingConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	cwt, ok := c.Conn.(redis.ConnWithTimeout)
	if !ok {
		return nil, errNoCtx
	}
	return cwt.ReceiveWithTimeout(timeout)
}

// Trips are the round trips of one uncontended Lock and one Unlock, each
// the most that any one node saw (calls to several nodes in parallel count
// once), averaged over the pairs measured.
type Trips struct {
	Pairs   int     `json:"pairs"`
	Acquire float64 `json:"acquire"`
	Release float64 `json:"release"`
}

// RoundTrips makes pairs sequential Lock+Unlock pairs on one key with
// locker, which must have been built over pools, and counts their round
// trips. One pair runs first, uncounted, so that scripts are loaded. pairs
// < 1 or no pools give an error wrapping strategy.ErrInvalidConfig.
func RoundTrips(ctx context.Context, locker strategy.Locker, pools []*Counting, pairs int) (Trips, error) {
	if locker == nil || len(pools) == 0 {
		return Trips{}, errorf("%w: RoundTrips needs a locker and its Counting pools", strategy.ErrInvalidConfig)
	}
	if pairs < 1 {
		return Trips{}, errorf("%w: pairs = %d, want at least 1", strategy.ErrInvalidConfig, pairs)
	}
	key := "lockzoo-bench:" + runID() + ":trips"
	var acquire, release int64
	for i := range pairs + 1 {
		before := snapshot(pools)
		lease, err := locker.Lock(ctx, key)
		if err != nil {
			return Trips{}, errorf("Lock(%q): %w", key, err)
		}
		held := snapshot(pools)
		if err := lease.Unlock(ctx); err != nil {
			return Trips{}, errorf("Unlock(%q): %w", key, err)
		}
		if i == 0 {
			continue // warm-up
		}
		acquire += most(before, held)
		release += most(held, snapshot(pools))
	}
	return Trips{
		Pairs:   pairs,
		Acquire: float64(acquire) / float64(pairs),
		Release: float64(release) / float64(pairs),
	}, nil
}

func snapshot(pools []*Counting) []int64 {
	s := make([]int64, len(pools))
	for i, p := range pools {
		s[i] = p.Trips()
	}
	return s
}

// most returns the largest count any one pool added from before to after.
func most(before, after []int64) int64 {
	var m int64
	for i := range before {
		m = max(m, after[i]-before[i])
	}
	return m
}

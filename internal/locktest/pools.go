package locktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// ErrInjected is the failure FaultyPool injects.
var ErrInjected = errors.New("locktest: injected pool failure")

// PoolFault is what a FaultyPool's GetContext does.
type PoolFault int32

// The faults a FaultyPool injects.
const (
	PoolHealthy PoolFault = iota // lend a connection of the real pool
	PoolFails                    // return ErrInjected
	PoolNilConn                  // return (nil, nil)
	PoolPanics                   // lend a connection whose every method panics
)

// FaultyPool wraps a real pool (a Redis node's) and injects pool faults on
// demand: a test sets the fault for every later GetContext (Set), or fails
// only the next few (FailNext). It is safe for concurrent use; its zero
// value is not usable, create it with NewFaultyPool.
type FaultyPool struct {
	pool     strategy.Pool
	fault    atomic.Int32
	failNext atomic.Int64
	gets     atomic.Int64
}

// NewFaultyPool returns a healthy FaultyPool over pool.
func NewFaultyPool(pool strategy.Pool) *FaultyPool { return &FaultyPool{pool: pool} }

// Set makes every later GetContext do f.
func (p *FaultyPool) Set(f PoolFault) { p.fault.Store(int32(f)) }

// FailNext makes the next n calls of GetContext return ErrInjected, after
// which the pool does what Set said.
func (p *FaultyPool) FailNext(n int) { p.failNext.Store(int64(n)) }

// Gets returns how many times GetContext was called.
func (p *FaultyPool) Gets() int64 { return p.gets.Load() }

// GetContext lends a connection or injects the fault set.
func (p *FaultyPool) GetContext(ctx context.Context) (redis.Conn, error) {
	p.gets.Add(1)
	if p.failNext.Load() > 0 && p.failNext.Add(-1) >= 0 {
		return nil, ErrInjected
	}
	switch PoolFault(p.fault.Load()) {
	case PoolFails:
		return nil, ErrInjected
	case PoolNilConn:
		return nil, nil
	case PoolPanics:
		return panicConn{}, nil
	}
	return p.pool.GetContext(ctx)
}

// panicConn is a connection whose every method panics.
type panicConn struct{}

func (panicConn) Close() error                   { panic("locktest: injected panic in Close") }
func (panicConn) Err() error                     { panic("locktest: injected panic in Err") }
func (panicConn) Do(string, ...any) (any, error) { panic("locktest: injected panic in Do") }
func (panicConn) Send(string, ...any) error      { panic("locktest: injected panic in Send") }
func (panicConn) Flush() error                   { panic("locktest: injected panic in Flush") }
func (panicConn) Receive() (any, error)          { panic("locktest: injected panic in Receive") }

// BarePool wraps pool so that its connections implement redis.Conn only:
// neither redis.ConnWithContext nor redis.ConnWithTimeout, like a
// user's connection type that wraps redigo's.
func BarePool(pool strategy.Pool) strategy.Pool { return wrapPool{pool, bare} }

// TimeoutPool wraps pool so that its connections implement redis.Conn and
// redis.ConnWithTimeout, but not redis.ConnWithContext.
func TimeoutPool(pool strategy.Pool) strategy.Pool { return wrapPool{pool, timed} }

type wrapPool struct {
	pool strategy.Pool
	wrap func(redis.Conn) redis.Conn
}

func (p wrapPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil {
		return c, err
	}
	return p.wrap(c), nil
}

// bareConn hides every method of the connection but redis.Conn's.
type bareConn struct{ c redis.Conn }

func bare(c redis.Conn) redis.Conn { return bareConn{c} }

func (b bareConn) Close() error                            { return b.c.Close() }
func (b bareConn) Err() error                              { return b.c.Err() }
func (b bareConn) Do(cmd string, args ...any) (any, error) { return b.c.Do(cmd, args...) }
func (b bareConn) Send(cmd string, args ...any) error      { return b.c.Send(cmd, args...) }
func (b bareConn) Flush() error                            { return b.c.Flush() }
func (b bareConn) Receive() (any, error)                   { return b.c.Receive() }

// timedConn is bareConn plus redis.ConnWithTimeout.
type timedConn struct{ bareConn }

func timed(c redis.Conn) redis.Conn { return timedConn{bareConn{c}} }

var _ redis.ConnWithTimeout = timedConn{}

func (t timedConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	return redis.DoWithTimeout(t.c, d, cmd, args...)
}

func (t timedConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(t.c, d)
}

// DialPool returns a new *redis.Pool of node's whose Dial ignores the
// caller's context, as redigo's examples build one (Dial, not
// DialContext); it is closed when the test ends.
func DialPool(t testing.TB, node *redistest.Node) *redis.Pool {
	t.Helper()
	p := &redis.Pool{
		Dial:      func() (redis.Conn, error) { return redis.Dial("tcp", node.Addr()) },
		MaxIdle:   16,
		MaxActive: 0,
	}
	t.Cleanup(func() { p.Close() })
	return p
}

package locktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

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

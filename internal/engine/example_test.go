package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/strategy"
)

// memory is a toy Technique over a Go map, to show the shape of one; real
// techniques send Redis commands (engine.Do, engine.Eval, engine.Watched).
type memory struct{ held map[string]string }

func (m *memory) Acquire(_ context.Context, a engine.Attempt) (engine.Acquired, error) {
	if _, ok := m.held[a.Key]; ok {
		return engine.Acquired{}, strategy.ErrNotAcquired
	}
	m.held[a.Key] = a.Token
	return engine.Acquired{Fence: uint64(len(m.held))}, nil
}

func (m *memory) Release(_ context.Context, h engine.Held) error {
	if m.held[h.Key] != h.Value {
		return strategy.ErrNotHeld
	}
	delete(m.held, h.Key)
	return nil
}

func (m *memory) Extend(context.Context, engine.Held, time.Duration) (engine.Acquired, error) {
	return engine.Acquired{}, strategy.ErrUnsupported
}

func ExampleNew() {
	l, err := engine.New(&memory{held: map[string]string{}}, strategy.Properties{Name: "memory"},
		strategy.Config{Token: func() string { return "t1" }})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	lease, _ := l.TryLock(ctx, "k")
	_, err = l.TryLock(ctx, "k")
	// The value written is Config.Token's followed by "." and a unique part.
	fmt.Println(lease.Key(), strings.HasPrefix(lease.Token(), "t1."), lease.Fence(), err != nil)
	fmt.Println(lease.Unlock(ctx))
	// Output:
	// k true 1 true
	// <nil>
}

// ExamplePipeline sends the commands of many goroutines to one Redis
// server over one shared connection. It needs a Redis server on
// localhost:6379, so it is compiled but not run.
func ExamplePipeline() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	defer pool.Close()
	p := engine.NewPipeline(pool)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			// Each goroutine gets the reply to its own command.
			n, err := redis.Int64(p.Do(context.Background(), "INCR", []any{fmt.Sprint("example:", i)}))
			fmt.Println(n, err)
		})
	}
	wg.Wait()
}

// ExamplePipeline_DoTwo checks the connection a command runs on, as
// redlock's restart guard does: CLIENT GETNAME goes right before the
// command on the same connection, and both replies come back in order.
// (Compiled, not run: it needs a Redis at localhost:6379.)
func ExamplePipeline_DoTwo() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	defer pool.Close()
	p := engine.NewDeadlinePipeline(pool)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	name, reply, err := p.DoTwo(ctx,
		engine.Command{Name: "CLIENT", Args: []any{"GETNAME"}},
		engine.Command{Name: "INCR", Args: []any{"example:counter"}})
	if err != nil {
		fmt.Println("the connection failed:", err)
		return
	}
	fmt.Println(name.Value == nil, reply.Value, reply.Err)
}

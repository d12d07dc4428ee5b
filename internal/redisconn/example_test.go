package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

// ExamplePipeline sends the commands of many goroutines to one Redis
// server over one shared connection. It needs a Redis server on
// localhost:6379, so it is compiled but not run.
func ExamplePipeline() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	defer pool.Close()
	p := redisconn.NewPipeline(pool)
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

// ExamplePipeline_DoTwo checks the connection a command runs on, as a
// check of the server's restarts does: CLIENT GETNAME goes right before the
// command on the same connection, and both replies come back in order.
// (Compiled, not run: it needs a Redis at localhost:6379.)
func ExamplePipeline_DoTwo() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	defer pool.Close()
	p := redisconn.NewDeadlinePipeline(pool)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	name, reply, err := p.DoTwo(ctx,
		redisconn.Command{Name: "CLIENT", Args: []any{"GETNAME"}},
		redisconn.Command{Name: "INCR", Args: []any{"example:counter"}})
	if err != nil {
		fmt.Println("the connection failed:", err)
		return
	}
	fmt.Println(name.Value == nil, reply.Value, reply.Err)
}

// ExampleIsNil: a nil *redis.Pool passed as a Pool is not a nil
// interface, but IsNil sees it.
func ExampleIsNil() {
	var pool *redis.Pool
	var p redisconn.Pool = pool
	fmt.Println(p == nil, redisconn.IsNil(p))
	// Output:
	// false true
}

// ExampleConn: a context that has already ended gets its error, and the
// pool is not asked for a connection.
func ExampleConn() {
	dials := 0
	pool := &redis.Pool{Dial: func() (redis.Conn, error) {
		dials++
		return nil, errors.New("no server")
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := redisconn.Conn(ctx, pool)
	fmt.Println(err, dials)
	// Output:
	// get connection: context canceled 0
}

// ExamplePipeline_Do_notSent: when no connection can be had, the error
// says that the command was not sent, so the server cannot have run it.
func ExamplePipeline_Do_notSent() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("no server") }}
	p := redisconn.NewPipeline(pool)
	_, err := p.Do(context.Background(), "PING", nil)
	fmt.Println(errors.Is(err, redisconn.ErrNotSent))
	// Output:
	// true
}

// ExampleScript_Args builds one call's EVALSHA arguments: the script's
// hash and key count come first, then the keys and arguments appended.
func ExampleScript_Args() {
	s := redisconn.NewScript(1, "return redis.call('GET', KEYS[1])")
	args := append(s.Args(1), "some-key")
	fmt.Println(len(args), args[0] == s.Redis().Hash(), args[1], args[2])
	// Output:
	// 3 true 1 some-key
}

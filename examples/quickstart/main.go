// Command quickstart is the README's quick start: it takes a lua_release
// lock on a Redis server, works under it, and releases it.
//
//	go run ./examples/quickstart -addr 127.0.0.1:6379
//
// `make example` runs it against a Redis node the test harness starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "Redis server address")
	flag.Parse()
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", *addr)
	}}
	defer pool.Close()
	if err := run(context.Background(), pool, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run is the quick start proper.
func run(ctx context.Context, pool *redis.Pool, out io.Writer) error {
	locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		return err
	}
	defer locker.Close() // ends its notice connection; runs after the Unlock below
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		return err // wraps strategy.ErrNotAcquired when the wait timed out
	}
	fmt.Fprintf(out, "holding %s until %s\n", lease.Key(), lease.Deadline().Format(time.RFC3339Nano))
	// ... the critical section ...
	if err := lease.Unlock(ctx); err != nil {
		return err // wraps strategy.ErrNotHeld if the lock expired under us
	}
	fmt.Fprintln(out, "released")
	return nil
}

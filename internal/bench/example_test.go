package bench_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/bench"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// Measure a Locker uncontended and on one contended key, next to the raw
// ceiling on the same server.
func Example() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", "127.0.0.1:6379")
	}}
	defer pool.Close()
	locker, err := luarelease.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	raw, err := bench.Raw(ctx, pool, 16, 2*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	speed, err := bench.Uncontended(ctx, locker, 16, 2*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	c, err := bench.Contended(ctx, locker, bench.DefaultWorkload())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.0f ops/s (%.0f%% of raw), contended utilisation %.0f%%, p99 wait %v\n",
		speed.OpsPerSec, 100*speed.OpsPerSec/raw.OpsPerSec, 100*c.Utilisation, c.Wait.P99)
}

// Count the round trips of one Lock and one Unlock.
func ExampleRoundTrips() {
	pool := bench.Count(&redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", "127.0.0.1:6379")
	}})
	locker, err := luarelease.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	trips, err := bench.RoundTrips(context.Background(), locker, []*bench.Counting{pool}, 20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v+%v round trips\n", trips.Acquire, trips.Release)
}

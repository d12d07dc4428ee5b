package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/sentinel"
	"github.com/lockzoo/lockzoo/strategy"
)

// A lua_release Locker behind Sentinel: the Pool finds the primary and
// follows it across failovers.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := sentinel.New(ctx, "mymaster",
		[]string{"10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"},
		sentinel.WithSentinelAuth("watcher", "sentinel-secret"),
		sentinel.WithAuth("app", "app-secret"),
		sentinel.WithDialOptions(redis.DialReadTimeout(time.Second)),
	)
	if err != nil {
		log.Fatal(err) // wraps sentinel.ErrUnknownMaster, ErrNoSentinel, ErrNotMaster, ...
	}
	defer pool.Close()

	locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Unlock(context.Background())
	// ... work on orders:42 ...
}

// Against a primary, two replicas and three Sentinels that the test
// harness starts: the Pool lends connections to the primary, and locks
// taken through it live there.
func ExampleNew() {
	d := redistest.NewDetached("example-sentinel")
	err := d.Run(func() {
		s := redistest.StartSentinel(d, redistest.SentinelConfig{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool, err := sentinel.New(ctx, s.Name(), s.Addrs())
		if err != nil {
			fmt.Println(err)
			return
		}
		defer pool.Close()
		fmt.Println("the pool's master is the primary:", s.NodeAt(pool.Addr()) == s.Master())

		locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer locker.Close()
		lease, err := locker.Lock(ctx, "orders:42")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("unlock:", lease.Unlock(ctx))
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// the pool's master is the primary: true
	// unlock: <nil>
}

// A master name the Sentinels do not monitor is a configuration error.
func ExampleNew_unknownMaster() {
	d := redistest.NewDetached("example-sentinel-unknown")
	err := d.Run(func() {
		s := redistest.StartSentinel(d, redistest.SentinelConfig{Replicas: 1, Sentinels: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := sentinel.New(ctx, "billing", s.Addrs())
		fmt.Println(errors.Is(err, sentinel.ErrUnknownMaster))
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// true
}

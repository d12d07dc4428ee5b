package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/cluster"
	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// Every lock goes to the master of its key's slot.
func Example() {
	ctx := context.Background()
	pool, err := cluster.New(ctx, []string{"127.0.0.1:7000", "127.0.0.1:7001"})
	if err != nil {
		log.Fatal(err) // wraps cluster.ErrNotCluster when no seed gave a slot map
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
}

// WithDial connects to every node with the user's credentials (and TLS,
// with redis.DialUseTLS).
func ExampleWithDial() {
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr,
			redis.DialUsername("app"), redis.DialPassword("secret"),
			redis.DialConnectTimeout(time.Second))
	}
	pool, err := cluster.New(context.Background(), []string{"10.0.0.1:6379"}, cluster.WithDial(dial))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
}

// Redlock over three independent clusters: each cluster is one node.
func ExampleNew_redlock() {
	ctx := context.Background()
	var pools []strategy.Pool
	for _, seed := range []string{"10.0.1.1:6379", "10.0.2.1:6379", "10.0.3.1:6379"} {
		p, err := cluster.New(ctx, []string{seed})
		if err != nil {
			log.Fatal(err)
		}
		defer p.Close()
		pools = append(pools, p)
	}
	locker, err := redlock.New(pools, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
}

// Slot is the hash slot Redis Cluster puts a key in: a lock's keys share
// the slot of their hash tag.
func ExampleSlot() {
	fmt.Println(cluster.Slot("foo"))
	fmt.Println(cluster.Slot("lock:{orders:42}:fence") == cluster.Slot("orders:42"))
	// Output:
	// 12182
	// true
}

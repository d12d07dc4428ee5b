package luarelease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	luarelease "github.com/lockzoo/lockzoo/lua_release"
	"github.com/lockzoo/lockzoo/strategy"
)

// newPool returns a redigo pool whose dials are bounded by the caller's
// context.
func newPool(addr string) *redis.Pool {
	return &redis.Pool{
		MaxIdle:     64,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr)
		},
	}
}

func Example() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()

	locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		log.Fatal(err) // wraps strategy.ErrNotAcquired if the wait timed out
	}
	defer lease.Unlock(context.Background())
	// ... work on orders:42, finishing before lease.Deadline() ...
}

func ExampleLocker_TryLock() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()
	locker, err := luarelease.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}

	lease, err := locker.TryLock(context.Background(), "report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		fmt.Println("someone else is writing the report")
		return
	case err != nil:
		log.Fatal(err) // Redis unreachable, bad key, ...
	}
	defer lease.Unlock(context.Background())
	fmt.Println("writing the report")
}

func ExampleNew_invalidConfig() {
	_, err := luarelease.New(nil, strategy.Config{})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: lua_release: invalid config: pool is nil
}

// ExampleNew_replicas waits for both replicas of the primary before each
// lease counts: a failover that promotes the most up-to-date replica then
// keeps every granted lease.
func ExampleNew_replicas() {
	pool := newPool("127.0.0.1:6379") // the primary
	defer pool.Close()
	locker, err := luarelease.New(pool, strategy.Config{TTL: 5 * time.Second, Replicas: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	lease, err := locker.Lock(context.Background(), "orders:42")
	switch {
	case errors.Is(err, strategy.ErrNotReplicated):
		log.Print("the replicas did not acknowledge in time; no lease, nothing left locked")
		return
	case err != nil:
		log.Fatal(err)
	}
	defer lease.Unlock(context.Background())
}

func ExampleNew_invalidReplicas() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()
	_, err := luarelease.New(pool, strategy.Config{TTL: time.Second, Replicas: 1, ReplicaTimeout: time.Second})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: lua_release: invalid config: ReplicaTimeout 1s is not below the TTL 1s: the lock could expire before its replicas acknowledged it
}

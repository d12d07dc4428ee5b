package setnxexpire_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	setnxexpire "github.com/lockzoo/lockzoo/setnx_expire"
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

	// The TTL goes to Redis in whole seconds, rounded up: 2s stays EXPIRE 2.
	locker, err := setnxexpire.New(pool, strategy.Config{TTL: 2 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()

	// While it waits, Lock gives a TTL to a lock whose holder died between
	// SETNX and EXPIRE, so that lock ends within a TTL.
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
	locker, err := setnxexpire.New(pool, strategy.Config{})
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
	_, err := setnxexpire.New(nil, strategy.Config{})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: setnx_expire: invalid config: pool is nil
}

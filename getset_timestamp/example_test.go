package getsettimestamp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	getsettimestamp "github.com/lockzoo/lockzoo/getset_timestamp"
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

	// Every client's clock must agree: the lock's end is a time each client
	// reads from its own clock.
	locker, err := getsettimestamp.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		// Wraps strategy.ErrNotAcquired if the wait timed out, and
		// getsettimestamp.ErrNotTimestamp if the key is someone else's data.
		log.Fatal(err)
	}
	fmt.Println("lock:orders:42 holds", lease.Token()) // the expiry, Unix ms
	defer lease.Unlock(context.Background())
	// ... work on orders:42, finishing before lease.Deadline() ...
}

func ExampleLocker_TryLock() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()
	locker, err := getsettimestamp.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}

	lease, err := locker.TryLock(context.Background(), "report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		fmt.Println("someone else is writing the report")
		return
	case errors.Is(err, getsettimestamp.ErrNotTimestamp):
		log.Fatal(err) // lock:report is another application's key
	case err != nil:
		log.Fatal(err) // Redis unreachable, bad key, ...
	}
	defer lease.Unlock(context.Background())
	fmt.Println("writing the report")
}

func ExampleNew_invalidConfig() {
	_, err := getsettimestamp.New(nil, strategy.Config{})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: getset_timestamp: invalid config: pool is nil
}

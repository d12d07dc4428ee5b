package method1_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/getset_timestamp/method1"
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

	// Method 1 is shown for its flaw: the key it writes never expires, so
	// if this process dies before Unlock, lock:orders:42 stays held until
	// someone deletes it.
	locker, err := method1.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	lease, err := locker.Lock(ctx, "orders:42") // SETNX every 0.5 s
	if err != nil {
		log.Fatal(err) // wraps strategy.ErrNotAcquired if the wait timed out
	}
	defer lease.Unlock(context.Background()) // a plain DEL
	fmt.Println("lock:orders:42 holds", lease.Token())
}

func ExampleLocker_TryLock() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()
	locker, err := method1.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	lease, err := locker.TryLock(context.Background(), "report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		fmt.Println("lock:report exists: someone holds it, or a dead holder left it")
		return
	case err != nil:
		log.Fatal(err)
	}
	defer lease.Unlock(context.Background())
	fmt.Println("writing the report")
}

func ExampleNew_invalidConfig() {
	_, err := method1.New(nil, strategy.Config{})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: getset_timestamp/method1: invalid config: pool is nil
}

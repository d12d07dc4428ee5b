package method2_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/getset_timestamp/method2"
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

	// Method 2 is shown for its flaw: two waiters that both find this lock
	// expired both take it. Every client's clock must agree, too.
	locker, err := method2.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		// Wraps strategy.ErrNotAcquired if the wait timed out, and
		// method2.ErrNotTimestamp if the key is someone else's data.
		log.Fatal(err)
	}
	defer lease.Unlock(context.Background())           // a plain DEL
	fmt.Println("lock:orders:42 holds", lease.Token()) // the expiry, Unix ms
	// ... work on orders:42, finishing before lease.Deadline() ...
}

func ExampleLocker_TryLock() {
	pool := newPool("127.0.0.1:6379")
	defer pool.Close()
	locker, err := method2.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()

	lease, err := locker.TryLock(context.Background(), "report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		fmt.Println("someone else is writing the report")
		return
	case errors.Is(err, method2.ErrNotTimestamp):
		log.Fatal(err) // lock:report is another application's key
	case err != nil:
		log.Fatal(err)
	}
	defer lease.Unlock(context.Background())
	fmt.Println("writing the report")
}

func ExampleNew_invalidConfig() {
	_, err := method2.New(nil, strategy.Config{})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	_, err = method2.New(&redis.Pool{}, strategy.Config{TTL: -time.Second})
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: getset_timestamp/method2: invalid config: pool is nil
	// lockzoo: getset_timestamp/method2: invalid config: TTL -1s is negative
}

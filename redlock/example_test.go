package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/fencing"
	"github.com/lockzoo/lockzoo/redlock"
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
	// Five independent masters (no replication between them).
	var pools []strategy.Pool
	for _, addr := range []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379", "10.0.0.4:6379", "10.0.0.5:6379"} {
		p := newPool(addr)
		defer p.Close()
		pools = append(pools, p)
	}
	locker, err := redlock.New(pools, redlock.Config{Config: strategy.Config{TTL: 10 * time.Second}})
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
	// ... work on orders:42, finishing before lease.Deadline(): the validity
	// already accounts for the time the vote took and for clock drift ...
}

func ExampleLocker_TryLock() {
	pools := []strategy.Pool{newPool("10.0.0.1:6379"), newPool("10.0.0.2:6379"), newPool("10.0.0.3:6379")}
	locker, err := redlock.New(pools, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	lease, err := locker.TryLock(context.Background(), "report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		fmt.Println("someone else holds a majority")
		return
	case err != nil:
		log.Fatal(err) // too many nodes unreachable, bad key, ...
	}
	defer lease.Unlock(context.Background())
	fmt.Println("writing the report until", lease.Deadline())
}

// Fence: the lease's fencing token increases from holder to holder, so a
// resource that checks it refuses a holder that paused past its lease.
func Example_fence() {
	pools := []strategy.Pool{newPool("10.0.0.1:6379"), newPool("10.0.0.2:6379"), newPool("10.0.0.3:6379")}
	locker, err := redlock.New(pools, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// The resource may live anywhere that can check the token; here, a
	// value on a Redis server of its own.
	res, err := fencing.NewResource(newPool("10.0.0.9:6379"), "orders:42:state")
	if err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Unlock(ctx)
	// ... a long GC pause here may let the lease run out and another
	// holder take the lock and write with a higher token ...
	switch err := res.Write(ctx, lease.Fence(), "shipped"); {
	case errors.Is(err, fencing.ErrStaleToken):
		fmt.Println("a later holder wrote first: this write was refused")
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleLocker_Wait() {
	pools := []strategy.Pool{newPool("10.0.0.1:6379"), newPool("10.0.0.2:6379"), newPool("10.0.0.3:6379")}
	locker, err := redlock.New(pools, redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	// ... use locker ...

	// At shutdown, let the calls a decision did not wait for (slow nodes,
	// releases after failed attempts) finish before closing the pools.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := locker.Wait(ctx); err != nil {
		log.Print(err)
	}
}

func ExampleNew_invalidConfig() {
	pools := []strategy.Pool{&redis.Pool{}, &redis.Pool{}, &redis.Pool{}}
	_, err := redlock.New(pools, redlock.Config{Quorum: 4})
	fmt.Println(errors.Is(err, strategy.ErrInvalidConfig))
	fmt.Println(err)
	// Output:
	// true
	// lockzoo: redlock: invalid config: Quorum 4 is outside 1..3 (the number of pools)
}

package setnxex_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
)

// Example takes a lock, works under it and releases it. It needs a Redis
// server on localhost:6379, so it has no Output line and is only compiled.
func Example() {
	pool := &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", "localhost:6379")
		},
		MaxIdle: 16,
	}
	defer pool.Close()

	locker, err := setnxex.New(pool, strategy.Config{TTL: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	lease, err := locker.Lock(ctx, "orders:42")
	if err != nil {
		log.Fatal(err)
	}
	// ... work on orders:42, finishing before lease.Deadline() ...

	// Unlock runs GET, compares, then DEL. Finish well before Deadline: a
	// lock that expires between the GET and the DEL is deleted even if
	// someone else took it meanwhile.
	if err := lease.Unlock(ctx); errors.Is(err, strategy.ErrNotHeld) {
		log.Print("the lock expired before we released it")
	} else if err != nil {
		log.Fatal(err)
	}
}

// ExampleLocker_TryLock makes one attempt and backs off when the lock is
// taken.
func ExampleLocker_TryLock() {
	pool := &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", "localhost:6379")
		},
	}
	defer pool.Close()

	locker, err := setnxex.New(pool, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lease, err := locker.TryLock(ctx, "nightly-report")
	switch {
	case errors.Is(err, strategy.ErrNotAcquired):
		return // another worker is on it
	case err != nil:
		log.Fatal(err)
	}
	defer lease.Unlock(ctx)
	// Long job: push the expiry out (GET, then EXPIRE in whole seconds).
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		log.Print(err)
	}
}

// ExampleLocker_Properties shows what the technique claims.
func ExampleLocker_Properties() {
	locker, err := setnxex.New(&redis.Pool{}, strategy.Config{})
	if err != nil {
		log.Fatal(err)
	}
	p := locker.Properties()
	log.Printf("%s: owner-safe release %v, %d round trips to release", p.Name, p.OwnerSafeRelease, p.ReleaseRoundTrips)
}

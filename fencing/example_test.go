package fencing_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/fencing"
	"github.com/lockzoo/lockzoo/strategy"
)

// A holder writes with its lease's fencing token; a holder whose lease ran
// out while it was paused is refused once a newer holder has written.
func ExampleResource_Write() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "127.0.0.1:6379") }}
	defer pool.Close()
	res, err := fencing.NewResource(pool, "orders:42:state")
	if err != nil {
		log.Fatal(err)
	}
	var lease strategy.Lease // from locker.Lock(ctx, "orders:42")
	err = res.Write(context.Background(), lease.Fence(), "shipped")
	if errors.Is(err, fencing.ErrStaleToken) {
		fmt.Println("lost the lock while paused; a newer holder has written")
	}
}

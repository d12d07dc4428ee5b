package locktest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// KillWhileBusy runs pairs Lock+Unlock cycles of l in each of workers
// goroutines, each on its own key (prefix and the worker's number), within
// ctx, while the normal connections of nodes are killed (CLIENT KILL)
// three times, 20 ms apart. A Lock must succeed (it retries what failed);
// an Unlock that fails is retried until it releases or finds the lock no
// longer its own (ErrNotHeld). Every failure is t's error, and so is a
// kill that found no connection to kill.
func KillWhileBusy(ctx context.Context, t testing.TB, l strategy.Locker, nodes []*redistest.Node, workers, pairs int, prefix string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		EachWorker(t, workers, prefix, func(key string) error {
			for range pairs {
				lease, err := l.Lock(ctx, key)
				if err != nil {
					return fmt.Errorf("Lock(%q) = %v, want nil (it retries a failed connection, and no lost reply strands a lock)", key, err)
				}
				for err = lease.Unlock(ctx); err != nil && !errors.Is(err, strategy.ErrNotHeld); err = lease.Unlock(ctx) {
					if ctx.Err() != nil {
						return fmt.Errorf("Unlock(%q) = %v until the test's end, want nil", key, err)
					}
				}
			}
			return nil
		})
	}()
	killed := 0
	for range 3 {
		time.Sleep(20 * time.Millisecond)
		for _, n := range nodes {
			k, err := redis.Int(n.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
			if err != nil {
				t.Errorf("CLIENT KILL = %v, want nil", err)
			}
			killed += k
		}
	}
	<-done
	if killed == 0 {
		t.Errorf("CLIENT KILL killed no connection, want the Locker's")
	}
}

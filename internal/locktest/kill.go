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
// three times, at least 20 ms apart; a kill that found no connection (the
// workers have not connected yet: a loaded machine starts them late) is
// tried again and not counted. A Lock must succeed (it retries what
// failed); an Unlock that fails is retried until it releases or finds the
// lock no longer its own (ErrNotHeld). Every failure is t's error, and so
// is no kill finding a connection before the workers ended.
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
kills:
	for rounds := 0; rounds < 3; {
		select {
		case <-done:
			break kills
		case <-time.After(20 * time.Millisecond):
		}
		k := 0
		for _, n := range nodes {
			c, err := redis.Int(n.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
			if err != nil {
				t.Errorf("CLIENT KILL = %v, want nil", err)
			}
			k += c
		}
		if k > 0 {
			killed += k
			rounds++
		}
	}
	<-done
	if killed == 0 {
		t.Errorf("CLIENT KILL killed no connection, want the Locker's")
	}
}
